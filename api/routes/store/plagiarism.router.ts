/**
 * Administrators' side of the plagiarism check: run it on demand for a store template's
 * latest version, and approve a version held for review.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { conflict, forbidden, notFound } from "../../../shared/errors.ts";
import { lockStoreTemplate, setStatus } from "../../../shared/store/catalog.ts";
import { checkPlagiarism, presentCheck } from "../../../shared/store/plagiarism.ts";
import { currentUser } from "../../context.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { defineRoute } from "../route.ts";
import { plagiarismResource, storeIdParams } from "./store.schema.ts";

const tags = ["Template store"];
const latestVersion = (id: number) => sql.type(z.object({ id: z.number() }))`
  select id from store_template_versions where store_template_id = ${id} order by version desc limit 1`;

const check = defineRoute({
  method: "post",
  path: "/store/plagiarism-check",
  summary: "Check a store template for plagiarism (administrators)",
  description:
    "Compares the template's latest version (normalised: whitespace and placeholder identifiers) with every other published template by trigram similarity and exact file hashes; the result is stored. 404 for an unknown template or one never published.",
  tags,
  auth: "bearer",
  body: z.object({ template_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
  responses: { 200: { description: "The check", schema: z.object({ data: plagiarismResource }) }, 404: { description: "No such template or version" } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    if (!isSiteAdmin(user)) throw forbidden("Only administrators run plagiarism checks.");
    const result = await ctx.deps.pool.transaction(async (tx) => {
      const version = await tx.maybeOne(latestVersion(body.template_id));
      if (!version) throw notFound("Store template version");
      return checkPlagiarism(tx, {
        storeTemplateId: body.template_id,
        versionId: version.id,
        threshold: ctx.deps.config.store.plagiarismThreshold,
        checkedBy: user.id,
      });
    });
    ctx.body = { data: presentCheck(result) };
  },
});

const approve = defineRoute({
  method: "post",
  path: "/admin/store/templates/{id}/approve",
  summary: "Publish the latest version of a store template held by the plagiarism check",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "Published", schema: z.object({ message: z.string() }) }, 409: { description: "Withdrawn" } },
  handler: async (ctx, { params }) => {
    if (!isSiteAdmin(currentUser(ctx))) throw forbidden();
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await lockStoreTemplate(tx, params.id);
      const version = row && (await tx.maybeOne(latestVersion(params.id)));
      if (!row || !version) throw notFound("Store template version");
      if (row.status === "withdrawn") throw conflict("A withdrawn store template cannot be published.");
      await setStatus(tx, params.id, "published", version.id);
    });
    ctx.body = { message: "Store template published." };
  },
});

export const storePlagiarismRoutes = [check, approve];
