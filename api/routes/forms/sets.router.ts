/**
 * Form sets (spec "Form designer"): list, create, read (with windows and elements),
 * update, delete, and clone (a deep copy of windows and elements in one transaction).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { AppError, invalidField } from "../../../shared/errors.ts";
import { requireFormDesignerAccess } from "../../../shared/forms/access.ts";
import { defaultSetColors } from "../../../shared/forms/colors.ts";
import { windowElements } from "../../../shared/forms/elements.ts";
import { placementsNotIn } from "../../../shared/forms/placementsElsewhere.ts";
import { placementTables } from "../../../shared/forms/staleBindings.ts";
import { formSetColumns, formSetRow, formWindowColumns, formWindowRow, type FormSetRow } from "../../../shared/forms/rows.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment } from "../../pagination.ts";
import { formSetReadable } from "../../policies/formSet.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { formSetResource, presentFormSet, presentWindow, type FormSetResource } from "../../presenters/formDesigner.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { createSetBody, listSetsQuery, updateSetBody } from "./formDesigner.schema.ts";
import { formSetFor, projectStates, requireProjectEditable } from "./load.ts";

const tags = ["Form designer"];
const envelope = z.object({ message: z.string(), form_set: formSetResource });
const locked = { 402: { description: "No form designer access (`form_designer_locked`)" } };


/** A set with its windows and their elements, flagging placements a re-parse of the schema made stale. */
export async function presentFullSet(conn: CommonQueryMethods, set: FormSetRow, userId: number): Promise<FormSetResource> {
  const windows = await conn.any(sql.type(formWindowRow)`
    select ${formWindowColumns} from form_windows w where w.form_set_id = ${set.id} order by w.sort_order, w.id`);
  const elements = await windowElements(conn, windows.map((w) => w.id));
  const tables = await placementTables(conn, set, elements);
  return presentFormSet(set, userId, { windows: windows.map((w) => presentWindow(w, elements.filter((e) => e.form_window_id === w.id), tables)) });
}

const reload = (conn: CommonQueryMethods, id: number) => conn.one(sql.type(formSetRow)`select ${formSetColumns} from form_sets fs where fs.id = ${id}`);

/** Checks `project_id` (the caller edits its content) and `schema_id` (a schema of that project). */
async function checkPlace(tx: CommonQueryMethods, user: UserRow, projectId: number | null, schemaId: number | null): Promise<void> {
  if (projectId !== null) await projectForWrite(tx, projectId, user, "content");
  if (schemaId === null) return;
  if (projectId === null) throw invalidField("schema_id", "A schema needs the form set's project_id.");
  const found = await tx.exists(sql.type(z.object({}))`select 1 from schemas where id = ${schemaId} and project_id = ${projectId}`);
  if (!found) throw invalidField("schema_id", "The schema is not a schema of the form set's project.");
}

/**
 * A set that moves (another project, or another schema of its project) keeps its placements:
 * 422 on the field that moved it when some would not name a field there.
 */
async function checkPlacementsMove(tx: CommonQueryMethods, setId: number, projectId: number | null, schemaId: number | null, bySchema: boolean): Promise<void> {
  const problems = await placementsNotIn(tx, setId, projectId, schemaId);
  if (problems.length === 0) return;
  const listed = problems.join(", ");
  if (projectId === null) throw invalidField("project_id", `A set outside a project cannot hold field placements; remove them first: ${listed}.`);
  const place = bySchema ? "That schema lacks" : "That project's schemas lack";
  throw invalidField(bySchema ? "schema_id" : "project_id", `${place} fields the set's placements name: ${listed}. Change or remove them first.`);
}

const list = defineRoute({
  method: "get",
  path: "/form-sets",
  summary: "Form sets the caller may read: their own, their teams' and public ones",
  description: "`scope`: `all` (default), `mine` (created by the caller) or `shared` (others' sets visible to the caller).",
  tags,
  auth: "bearer",
  query: listSetsQuery,
  responses: { 200: { description: "A page of form sets with windows_count", schema: paginatedSchema(formSetResource) }, ...locked },
  handler: async (ctx, { query }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    await requireFormDesignerAccess(pool, user.id);
    const filters = [formSetReadable(user)];
    if (query.scope === "mine") filters.push(sql.fragment`fs.creator_user_id = ${user.id}`);
    if (query.scope === "shared") filters.push(sql.fragment`fs.creator_user_id <> ${user.id}`);
    if (query.q) filters.push(sql.fragment`fs.name ilike ${`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`);
    const where = sql.join(filters, sql.fragment` and `);
    const rows = await pool.any(sql.type(formSetRow.extend({ windows_count: z.number() }))`
      select ${formSetColumns}, (select count(*)::int from form_windows w where w.form_set_id = fs.id) as windows_count
      from form_sets fs where ${where} order by fs.updated_at desc, fs.id desc ${pageFragment(query)}`);
    const total = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from form_sets fs where ${where}`);
    ctx.body = paginated(rows.map(({ windows_count, ...row }) => presentFormSet(row, user.id, { windowsCount: windows_count })), total, query, new URL(ctx.href));
  },
});

const create = defineRoute({
  method: "post",
  path: "/form-sets",
  summary: "Create a form set",
  description: "`project_id` (optional) names the project whose schemas field placements refer to (the caller must be able to edit its content); `schema_id` narrows them to one schema of it. Colours default to a neutral palette.",
  tags,
  auth: "bearer",
  body: createSetBody,
  responses: {
    201: { description: "Created", schema: envelope },
    ...locked,
    404: { description: "The project is not visible to the caller" },
    409: { description: "The project is archived" },
    423: { description: "The project is locked" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const set = await ctx.deps.pool.transaction(async (tx) => {
      await requireFormDesignerAccess(tx, user.id);
      await checkPlace(tx, user, body.project_id ?? null, body.schema_id ?? null);
      const v = { ...defaultSetColors, ...body };
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into form_sets (creator_user_id, project_id, schema_id, name, description, visibility, default_background_color,
          default_window_color, default_text_color, default_button_color, default_button_text_color, is_active)
        values (${user.id}, ${v.project_id ?? null}, ${v.schema_id ?? null}, ${v.name}, ${v.description ?? null}, ${v.visibility ?? "private"},
          ${v.default_background_color}, ${v.default_window_color}, ${v.default_text_color}, ${v.default_button_color},
          ${v.default_button_text_color}, ${v.is_active ?? true})
        returning id`);
      return presentFullSet(tx, await reload(tx, id), user.id);
    });
    ctx.status = 201;
    ctx.body = { message: "Form set created.", form_set: set };
  },
});

const show = defineRoute({
  method: "get",
  path: "/form-sets/{id}",
  summary: "A form set with its windows and their elements",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The form set", schema: z.object({ form_set: formSetResource }) }, ...locked },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const set = await formSetFor(ctx.deps.pool, params.id, user, "read");
    ctx.body = { form_set: await presentFullSet(ctx.deps.pool, set, user.id) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/form-sets/{id}",
  summary: "Update a form set (its creator only)",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateSetBody,
  responses: {
    200: { description: "Updated", schema: envelope },
    ...projectStates,
    409: { description: "The set's or the named project is archived" },
    423: { description: "The set's or the named project is locked" },
  },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const set = await ctx.deps.pool.transaction(async (tx) => {
      const row = await formSetFor(tx, params.id, user, "edit");
      const projectId = body.project_id !== undefined ? body.project_id : row.project_id;
      const schemaId = body.schema_id !== undefined ? body.schema_id : body.project_id !== undefined ? null : row.schema_id;
      if (body.project_id !== undefined || body.schema_id !== undefined) await checkPlace(tx, user, projectId, schemaId);
      if (projectId !== row.project_id || schemaId !== row.schema_id) await checkPlacementsMove(tx, row.id, projectId, schemaId, body.schema_id !== undefined && projectId === row.project_id);
      const changes: Record<string, string | number | boolean | null> = { ...body, project_id: projectId, schema_id: schemaId };
      const sets = Object.entries(changes).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
      await tx.query(sql.type(ignoredRow)`
        update form_sets set ${sql.join([...sets, sql.fragment`updated_at = now()`], sql.fragment`, `)} where id = ${row.id}`);
      return presentFullSet(tx, await reload(tx, row.id), user.id);
    });
    ctx.body = { message: "Form set updated.", form_set: set };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/form-sets/{id}",
  summary: "Delete a form set with its windows and elements (its creator only)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Deleted", schema: messageResponse }, ...projectStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await formSetFor(tx, params.id, user, "edit");
      await tx.query(sql.type(ignoredRow)`delete from form_sets where id = ${row.id}`);
    });
    ctx.body = { message: "Form set deleted." };
  },
});

/** Copies `set` with its windows and elements for `user`; returns the new set's id. */
export async function cloneSet(tx: CommonQueryMethods, set: FormSetRow, user: UserRow): Promise<number> {
  const own = set.creator_user_id === user.id;
  // A copy keeps the project only when the caller may edit that project's content (the
  // creator too: one who left the project's team gets a copy outside it); without that right
  // the copy is outside the project, and another's copy is private. A caller who has the
  // right but meets a project that takes no changes now (locked, expired, archived) is
  // refused, rather than handed a copy that silently left the project. The creator's copy of
  // a set whose project was deleted keeps the set's project_id, as the set does.
  let projectId = set.project_id;
  if (projectId !== null) {
    const allowed = own ? requireProjectEditable(tx, user, projectId) : projectForWrite(tx, projectId, user, "content");
    projectId = await allowed.then(
      () => projectId,
      (error: unknown) => {
        if (error instanceof AppError && (error.status === 403 || error.status === 404)) return null;
        throw error;
      },
    );
  }
  const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into form_sets (creator_user_id, project_id, schema_id, name, description, visibility, cloned_from_id, default_background_color,
      default_window_color, default_text_color, default_button_color, default_button_text_color, is_active)
    select ${user.id}, ${projectId}, ${projectId === null ? null : set.schema_id}, name, description, ${own ? set.visibility : "private"}, id,
      default_background_color, default_window_color, default_text_color, default_button_color, default_button_text_color, is_active
    from form_sets where id = ${set.id}
    returning id`);
  const windows = await tx.anyFirst(sql.type(z.object({ id: z.number() }))`select id from form_windows where form_set_id = ${set.id} order by id`);
  for (const windowId of windows) {
    const copy = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into form_windows (form_set_id, name, display_name, window_type, min_width, min_height, default_width, default_height,
        background_color, window_color, text_color, is_active, sort_order, version)
      select ${id}, name, display_name, window_type, min_width, min_height, default_width, default_height,
        background_color, window_color, text_color, is_active, sort_order, version
      from form_windows where id = ${windowId} returning id`);
    await tx.query(sql.type(ignoredRow)`
      insert into form_elements (form_window_id, element_type, x_position, y_position, width, height, sort_order, is_visible, tab_order,
        background_color, border_width, border_color, anchor_right, anchor_bottom, anchor_width, anchor_height, container_orientation,
        container_gap, container_columns, max_fields, default_control_height, button_label, button_icon, button_action,
        button_background_color, button_text_color, field_name, control_type, link_table, link_field, link_display_field)
      select ${copy}, element_type, x_position, y_position, width, height, sort_order, is_visible, tab_order,
        background_color, border_width, border_color, anchor_right, anchor_bottom, anchor_width, anchor_height, container_orientation,
        container_gap, container_columns, max_fields, default_control_height, button_label, button_icon, button_action,
        button_background_color, button_text_color, field_name, control_type, link_table, link_field, link_display_field
      from form_elements where form_window_id = ${windowId} order by tab_order`);
  }
  return id;
}

const clone = defineRoute({
  method: "post",
  path: "/form-sets/{id}/clone",
  summary: "Copy a form set the caller may read, with its windows and elements",
  description: "The copy belongs to the caller and names the original in `cloned_from_id`. A copy of another's set is private; any copy keeps the project only when the caller may edit that project's content; a caller who may, in a project that takes no changes now (locked, expired, archived), is refused as the creator is.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 201: { description: "The copy", schema: envelope }, ...projectStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const copy = await ctx.deps.pool.transaction(async (tx) => {
      const set = await formSetFor(tx, params.id, user, "read");
      const id = await cloneSet(tx, set, user);
      return presentFullSet(tx, await reload(tx, id), user.id);
    });
    ctx.status = 201;
    ctx.body = { message: "Form set cloned.", form_set: copy };
  },
});

export const formSetRoutes = [list, create, show, update, remove, clone];
