/**
 * Form elements (spec "Form designer"): create in a window, read, update (fields merged
 * over the element and checked as a whole for its kind), delete. Tab order stays 1…n per
 * window: a new element at tab order t shifts those at t and after, a move shifts those
 * between, a delete closes the gap.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { elementChanges } from "../../../shared/forms/elementInput.ts";
import { deleteElement, insertElement, updateElement } from "../../../shared/forms/elements.ts";
import { formElementColumns, formElementRow, type FormElementRow, type FormSetRow } from "../../../shared/forms/rows.ts";
import { placementTables } from "../../../shared/forms/staleBindings.ts";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { currentUser } from "../../context.ts";
import { formElementResource, presentElement } from "../../presenters/formDesigner.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { createElementBody } from "./formDesigner.schema.ts";
import { elementFor, windowFor, projectStates } from "./load.ts";

const tags = ["Form designer"];
const envelope = z.object({ message: z.string(), form_element: formElementResource });
const locked = { 402: { description: "No form designer access (`form_designer_locked`)" } };

/** An element of `set` as answered, a placement flagged `missing` when a re-parse of the schema removed what it names. */
const present = async (conn: CommonQueryMethods, set: FormSetRow, row: FormElementRow) => presentElement(row, undefined, await placementTables(conn, set, [row]));

const read = async (conn: CommonQueryMethods, set: FormSetRow, id: number) =>
  present(conn, set, await conn.one(sql.type(formElementRow)`select ${formElementColumns} from form_elements e where e.id = ${id}`));

const create = defineRoute({
  method: "post",
  path: "/form-elements",
  summary: "Add an element to a window (its set's creator only)",
  description: [
    "The fields of every element and those of its `element_type`: containers (`container_simple`: container_orientation, container_gap;",
    "`container_tab`: max_fields, default_control_height; `container_grid`: container_columns, container_gap, max_fields),",
    "buttons (`button_*`: button_label, button_action), separators, and field placements (`field_*`: field_name of a schema of the set's",
    "project, `table.field` or `field`, and control_type; a dropdown also link_table, link_field, link_display_field of that schema).",
    "The element must fit inside its window; with the project's snap to grid on, positions and sizes are rounded to its grid size.",
    "`tab_order` (default last) shifts the elements at and after it.",
  ].join(" "),
  tags,
  auth: "bearer",
  body: createElementBody,
  responses: { 201: { description: "Created", schema: envelope }, ...projectStates, 404: { description: "The window is not visible to the caller" } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const element = await ctx.deps.pool.transaction(async (tx) => {
      const wctx = await windowFor(tx, body.form_window_id, user, "edit");
      return read(tx, wctx.set, await insertElement(tx, wctx, body));
    });
    ctx.status = 201;
    ctx.body = { message: "Form element created.", form_element: element };
  },
});

const show = defineRoute({
  method: "get",
  path: "/form-elements/{id}",
  summary: "An element",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The element", schema: z.object({ form_element: formElementResource }) }, ...locked },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const { element, ctx: wctx } = await elementFor(ctx.deps.pool, params.id, user, "read");
    ctx.body = { form_element: await present(ctx.deps.pool, wctx.set, element) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/form-elements/{id}",
  summary: "Update an element (its set's creator only)",
  description: "The fields sent are merged over the element and the result checked as a whole for its kind; a new `tab_order` moves it and shifts those between.",
  tags,
  auth: "bearer",
  params: idParams,
  body: elementChanges,
  responses: { 200: { description: "Updated", schema: envelope }, ...projectStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const element = await ctx.deps.pool.transaction(async (tx) => {
      const found = await elementFor(tx, params.id, user, "edit");
      await updateElement(tx, found.ctx, found.element, body);
      return read(tx, found.ctx.set, found.element.id);
    });
    ctx.body = { message: "Form element updated.", form_element: element };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/form-elements/{id}",
  summary: "Delete an element (its set's creator only); later elements move up in the tab order",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Deleted", schema: messageResponse }, ...projectStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const found = await elementFor(tx, params.id, user, "edit");
      await deleteElement(tx, found.element);
    });
    ctx.body = { message: "Form element deleted." };
  },
});

export const formElementRoutes = [create, show, update, remove];
