/**
 * Form windows (spec "Form designer"): create in a set, read with elements and `version`,
 * update, delete, and `PUT /form-windows/{id}/layout` (DESIGN §14): the whole element list
 * in one request, checked as a whole and applied atomically against the `version` read.
 *
 * Sizes follow the spec's table per `window_type`: omitted sizes take the type's defaults, a
 * size below the type's minimum is 422, and a window never shrinks below its elements.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { invalid, type FieldErrors } from "../../../shared/errors.ts";
import { windowElements } from "../../../shared/forms/elements.ts";
import { formWindowColumns, formWindowRow, type FormSetRow } from "../../../shared/forms/rows.ts";
import { judgedBy, placementTables } from "../../../shared/forms/staleBindings.ts";
import { windowSizes, type WindowType } from "../../../shared/forms/windowSizes.ts";
import { currentUser } from "../../context.ts";
import { formWindowResource, presentWindow, type FormWindowResource } from "../../presenters/formDesigner.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { createWindowBody, layoutBody, quickLayoutBody, updateWindowBody } from "./formDesigner.schema.ts";
import { formSetFor, windowFor, projectStates } from "./load.ts";
import { saveLayout } from "./saveLayout.ts";

const tags = ["Form designer"];
const envelope = z.object({ message: z.string(), form_window: formWindowResource });
const locked = { 402: { description: "No form designer access (`form_designer_locked`)" } };

interface Sizes {
  min_width: number;
  min_height: number;
  default_width: number;
  default_height: number;
}

/** The sizes of a window of `type` from what the client sent over `base`; 422 below the type's minimum. */
function sizesFor(type: WindowType, given: Partial<Sizes>, base: Sizes | null): Sizes {
  const table = windowSizes[type];
  const start = base ?? table;
  const sizes: Sizes = {
    min_width: given.min_width ?? Math.max(start.min_width, table.min_width),
    min_height: given.min_height ?? Math.max(start.min_height, table.min_height),
    default_width: given.default_width ?? Math.max(start.default_width, table.min_width),
    default_height: given.default_height ?? Math.max(start.default_height, table.min_height),
  };
  const errors: FieldErrors = {};
  const below = (field: keyof Sizes, min: number, what: string) => {
    if (sizes[field] < min) errors[field] = [`A ${type} window's ${field.replace("_", " ")} must be at least ${min} (${what}).`];
  };
  below("min_width", table.min_width, "the type's minimum");
  below("min_height", table.min_height, "the type's minimum");
  below("default_width", Math.max(table.min_width, sizes.min_width), "its minimum width");
  below("default_height", Math.max(table.min_height, sizes.min_height), "its minimum height");
  if (Object.keys(errors).length) throw invalid(errors);
  return sizes;
}

/** Window `id` of `set` with its elements, flagging placements a re-parse of the schema made stale. */
async function presentFull(conn: CommonQueryMethods, set: FormSetRow, id: number): Promise<FormWindowResource> {
  const row = await conn.one(sql.type(formWindowRow)`select ${formWindowColumns} from form_windows w where w.id = ${id}`);
  const elements = await windowElements(conn, [id]);
  return presentWindow(row, elements, await placementTables(conn, set, elements));
}

const create = defineRoute({
  method: "post",
  path: "/form-windows",
  summary: "Add a window to a form set (its creator only)",
  description: "Sizes default to the window type's (main_menu 800×600, min 400×300; create_edit 600×500, min 300×250; data_table 900×600, min 500×400); colours to the set's defaults.",
  tags,
  auth: "bearer",
  body: createWindowBody,
  responses: { 201: { description: "Created", schema: envelope }, ...projectStates, 404: { description: "The form set is not visible to the caller" } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const window = await ctx.deps.pool.transaction(async (tx) => {
      const set: FormSetRow = await formSetFor(tx, body.form_set_id, user, "edit");
      const sizes = sizesFor(body.window_type, body, null);
      const sortOrder =
        body.sort_order ??
        (await tx.oneFirst(sql.type(z.object({ n: z.number() }))`select coalesce(max(sort_order) + 1, 0)::int as n from form_windows where form_set_id = ${set.id}`));
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into form_windows (form_set_id, name, display_name, window_type, min_width, min_height, default_width, default_height,
          background_color, window_color, text_color, is_active, sort_order)
        values (${set.id}, ${body.name}, ${body.display_name ?? null}, ${body.window_type}, ${sizes.min_width}, ${sizes.min_height},
          ${sizes.default_width}, ${sizes.default_height}, ${body.background_color ?? set.default_background_color},
          ${body.window_color ?? set.default_window_color}, ${body.text_color === undefined ? set.default_text_color : body.text_color},
          ${body.is_active ?? true}, ${sortOrder})
        returning id`);
      await tx.query(sql.type(ignoredRow)`update form_sets set updated_at = now() where id = ${set.id}`);
      return presentFull(tx, set, id);
    });
    ctx.status = 201;
    ctx.body = { message: "Form window created.", form_window: window };
  },
});

const show = defineRoute({
  method: "get",
  path: "/form-windows/{id}",
  summary: "A window with its elements (in tab order) and its version",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The window", schema: z.object({ form_window: formWindowResource }) }, ...locked },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const { window, set } = await windowFor(ctx.deps.pool, params.id, user, "read");
    const elements = await windowElements(ctx.deps.pool, [window.id]);
    ctx.body = { form_window: presentWindow(window, elements, await placementTables(ctx.deps.pool, set, elements)) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/form-windows/{id}",
  summary: "Update a window (its set's creator only)",
  description: "Changing `window_type` without sizes takes the new type's defaults. A window may not shrink below its elements or their anchors (422).",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateWindowBody,
  responses: { 200: { description: "Updated", schema: envelope }, ...projectStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const window = await ctx.deps.pool.transaction(async (tx) => {
      const { window: row, set } = await windowFor(tx, params.id, user, "edit");
      const type = body.window_type ?? row.window_type;
      const sizes = sizesFor(type, body, type === row.window_type ? row : null);
      const extent = await tx.one(sql.type(z.object({ w: z.number(), h: z.number() }))`
        select coalesce(greatest(max(x_position + width), max(anchor_right), max(anchor_width)), 0)::int as w,
          coalesce(greatest(max(y_position + height), max(anchor_bottom), max(anchor_height)), 0)::int as h
        from form_elements where form_window_id = ${row.id}`);
      const errors: FieldErrors = {};
      if (sizes.default_width < extent.w) errors.default_width = [`The window's elements need a width of ${extent.w}.`];
      if (sizes.default_height < extent.h) errors.default_height = [`The window's elements need a height of ${extent.h}.`];
      if (Object.keys(errors).length) throw invalid(errors);
      const changes: Record<string, string | number | boolean | null> = { ...body, ...sizes, window_type: type };
      const sets = Object.entries(changes).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
      await tx.query(sql.type(ignoredRow)`
        update form_windows set ${sql.join([...sets, sql.fragment`version = version + 1`, sql.fragment`updated_at = now()`], sql.fragment`, `)}
        where id = ${row.id}`);
      return presentFull(tx, set, row.id);
    });
    ctx.body = { message: "Form window updated.", form_window: window };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/form-windows/{id}",
  summary: "Delete a window with its elements (its set's creator only)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Deleted", schema: messageResponse }, ...projectStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { window } = await windowFor(tx, params.id, user, "edit");
      await tx.query(sql.type(ignoredRow)`delete from form_windows where id = ${window.id}`);
    });
    ctx.body = { message: "Form window deleted." };
  },
});

const layout = defineRoute({
  method: "put",
  path: "/form-windows/{id}/layout",
  summary: "Replace a window's elements in one atomic write",
  description: [
    "`{version, elements}`: an element with `id` is updated, one without is created, one left out is deleted.",
    "The list is checked as a whole (each element as on its own route, inside the window, field placements naming real fields)",
    "and applied atomically. Tab order follows the elements' `tab_order` (distinct), then their order in the list, as 1…n.",
    "`version` is the window's version as read; when it changed since, 409 `version_conflict` and nothing is written.",
  ].join(" "),
  tags,
  auth: "bearer",
  params: idParams,
  body: layoutBody,
  quickBody: quickLayoutBody,
  bodyLimitBytes: 4 * 1024 * 1024,
  responses: {
    200: { description: "The window with its new elements and version", schema: envelope },
    ...projectStates,
    409: { description: "The window changed since `version` (`version_conflict`), or its project is archived" },
  },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const saved = await saveLayout(ctx.deps.pool, params.id, user, body.version, body.elements);
    ctx.body = { message: "Layout saved.", form_window: presentWindow(saved.window, saved.elements, judgedBy(saved.tables)) };
  },
});

export const formWindowRoutes = [create, show, update, remove, layout];
