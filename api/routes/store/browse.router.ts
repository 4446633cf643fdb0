/**
 * Browsing the store: search and filters, one template, categories and languages.
 */
import { z } from "zod";
import { storeCategories } from "../../../shared/store/catalog.ts";
import { categoryCounts, languageCounts, searchStore } from "../../../shared/store/search.ts";
import { currentUser } from "../../context.ts";
import { presentStoreTemplate } from "../../presenters/storeTemplate.ts";
import { defineRoute } from "../route.ts";
import { storeTemplateForRead } from "./load.ts";
import { browseQuery, storeIdParams, storePage, storePageSchema, storeTemplateResource } from "./store.schema.ts";

const tags = ["Template store"];

const browse = defineRoute({
  method: "get",
  path: "/store/templates",
  summary: "Browse and search published store templates",
  description: [
    "`q` searches names and descriptions (full-text, name weighted above description) and tolerates typos (a word the store's",
    "texts do not hold also stands for the store's words nearest to it by trigram similarity); results are ranked by relevance unless `sort` (`sales_count`, `rating`, `newest`) is given, and are newest",
    "first without `q`. `price_min`/`price_max` compare a template's price in its own unit (credits, or euros; free is 0).",
    "Pagination by `page` (default 1) and `rows` (default 12, at most 100): `{data, meta: {current_page, rows, total, last_page}}`.",
  ].join(" "),
  tags,
  auth: "bearer",
  query: browseQuery,
  responses: { 200: { description: "One page", schema: storePageSchema(storeTemplateResource) } },
  handler: async (ctx, { query }) => {
    const user = currentUser(ctx);
    const { rows, total } = await searchStore(ctx.deps.pool, query, user.id);
    ctx.body = storePage(
      rows.map((row) => presentStoreTemplate(row, user.id, ctx.deps.config.appUrl)),
      total,
      query,
    );
  },
});

const show = defineRoute({
  method: "get",
  path: "/store/templates/{id}",
  summary: "One store template (published, or your own)",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "The store template", schema: z.object({ data: storeTemplateResource }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const row = await storeTemplateForRead(ctx.deps.pool, params.id, user);
    ctx.body = { data: presentStoreTemplate(row, user.id, ctx.deps.config.appUrl) };
  },
});

const categories = defineRoute({
  method: "get",
  path: "/store/categories",
  summary: "The store's categories with their counts of published templates",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Categories", schema: z.object({ data: z.array(z.object({ name: z.string(), count: z.number() })) }) } },
  handler: async (ctx) => {
    const counts = await categoryCounts(ctx.deps.pool);
    ctx.body = { data: storeCategories.map((name) => ({ name, count: counts.get(name) ?? 0 })) };
  },
});

const languages = defineRoute({
  method: "get",
  path: "/store/languages",
  summary: "The languages of published store templates with their counts",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Languages", schema: z.object({ data: z.array(z.object({ name: z.string(), count: z.number() })) }) } },
  handler: async (ctx) => {
    ctx.body = { data: (await languageCounts(ctx.deps.pool)).map((row) => ({ name: row.language, count: row.count })) };
  },
});

export const storeBrowseRoutes = [browse, categories, languages, show];
