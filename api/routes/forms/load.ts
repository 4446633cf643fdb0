/**
 * Loading form sets, windows and elements for a route: 402 without form designer access,
 * 404 for what the caller may not read, 403 for what they read but may not change. Writes
 * lock the window row (FOR UPDATE) so element writes and layout writes of one window
 * serialise and its `version` is current.
 */
import { z } from "zod";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { sql } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { notFound } from "../../../shared/errors.ts";
import { formDesignerAccessFragment, formDesignerLocked, requireFormDesignerAccess } from "../../../shared/forms/access.ts";
import { WindowContext } from "../../../shared/forms/elements.ts";
import { formElementColumns, formElementRow, formSetColumns, formSetRow, formWindowRow, type FormElementRow, type FormSetRow } from "../../../shared/forms/rows.ts";
import { authorize } from "../../policies/authorize.ts";
import { canEditFormSet, formSetReadable } from "../../policies/formSet.ts";

export type Action = "read" | "edit";

function check(user: UserRow, set: FormSetRow, action: Action): void {
  if (action === "edit") authorize(canEditFormSet(user, set), "Only the form set's creator may change it.");
}

export async function formSetFor(conn: CommonQueryMethods, id: number, user: UserRow, action: Action): Promise<FormSetRow> {
  await requireFormDesignerAccess(conn, user.id);
  const set = await conn.maybeOne(sql.type(formSetRow)`
    select ${formSetColumns} from form_sets fs where fs.id = ${id} and ${formSetReadable(user)}
    ${action === "edit" ? sql.fragment`for update of fs` : sql.fragment``}`);
  if (!set) throw notFound("Form set");
  check(user, set, action);
  return set;
}

const jsonDates = { created_at: z.coerce.date(), updated_at: z.coerce.date() };
const windowLoad = z.object({
  has_access: z.boolean(),
  w: formWindowRow.extend(jsonDates),
  fs: formSetRow.extend(jsonDates),
  grid: z.number().nullable(),
});

/**
 * A window, its set and its project's grid, with the access check, in one query (layout
 * writes come in bursts while a designer drags); `edit` locks the window.
 */
export async function windowFor(conn: CommonQueryMethods, id: number, user: UserRow, action: Action): Promise<WindowContext> {
  const found = await conn.maybeOne(sql.type(windowLoad)`
    select ${formDesignerAccessFragment(user.id)} as has_access, to_jsonb(w) as w, to_jsonb(fs) as fs,
      case when p.form_designer_snap_to_grid then p.form_designer_grid_size end as grid
    from form_windows w join form_sets fs on fs.id = w.form_set_id
    left join projects p on p.id = fs.project_id and p.deleted_at is null
    where w.id = ${id} and ${formSetReadable(user)}
    ${action === "edit" ? sql.fragment`for update of w` : sql.fragment``}`);
  if (!found) {
    await requireFormDesignerAccess(conn, user.id);
    throw notFound("Form window");
  }
  if (!found.has_access) throw formDesignerLocked();
  check(user, found.fs, action);
  return new WindowContext(conn, found.fs, found.w, found.grid);
}

/** An element and its window's context; `edit` locks the window. */
export async function elementFor(conn: CommonQueryMethods, id: number, user: UserRow, action: Action): Promise<{ element: FormElementRow; ctx: WindowContext }> {
  await requireFormDesignerAccess(conn, user.id);
  const windowId = await conn.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    select e.form_window_id as id from form_elements e join form_windows w on w.id = e.form_window_id
    join form_sets fs on fs.id = w.form_set_id where e.id = ${id} and ${formSetReadable(user)}`);
  if (windowId === null) throw notFound("Form element");
  const ctx = await windowFor(conn, windowId, user, action);
  const element = await conn.maybeOne(sql.type(formElementRow)`select ${formElementColumns} from form_elements e where e.id = ${id}`);
  if (!element) throw notFound("Form element");
  return { element, ctx };
}

