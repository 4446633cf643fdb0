/**
 * Loading form sets, windows and elements for a route: 402 without form designer access,
 * 404 for what the caller may not read, 403 for what they read but may not change, and for
 * a change to a set that belongs to a project, what any change to that project's content
 * answers: 403 when the caller may not change it (any more), 423 while it is locked, 402 when
 * its subscription expired, 409 when archived. Writes lock the window row (FOR UPDATE) so
 * element writes and layout writes of one window serialise and its `version` is current, and
 * share-lock the project as content writes do.
 */
import { z } from "zod";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { sql } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { findProject } from "../../../shared/db/projects.ts";
import { forbidden, notFound } from "../../../shared/errors.ts";
import { projectStateError } from "../../../shared/projects/writable.ts";
import { formDesignerAccessFragment, formDesignerLocked, requireFormDesignerAccess } from "../../../shared/forms/access.ts";
import { WindowContext } from "../../../shared/forms/elements.ts";
import { formElementColumns, formElementRow, formSetColumns, formSetRow, formWindowRow, type FormElementRow, type FormSetRow } from "../../../shared/forms/rows.ts";
import { authorize } from "../../policies/authorize.ts";
import { canEditFormSet, formSetReadable } from "../../policies/formSet.ts";
import { canEditProjectContent } from "../../policies/project.ts";

export type Action = "read" | "edit";

/** The answers of a change in its project's states, for the OpenAPI document (as every content write of a project). */
export const projectStates = {
  402: { description: "No form designer access (`form_designer_locked`), or the project's subscription expired (`subscription_expired`)" },
  409: { description: "The project is archived" },
  423: { description: "The project is locked" },
};

async function check(conn: CommonQueryMethods, user: UserRow, set: FormSetRow, action: Action): Promise<void> {
  if (action !== "edit") return;
  authorize(canEditFormSet(user, set), "Only the form set's creator may change it.");
  await requireProjectEditable(conn, user, set.project_id);
}

export const lostProjectAccess = () => forbidden("The form set belongs to a project whose content you may no longer change.");

/**
 * A set in a project is the project's content: its creator changes it only while they may
 * change that content (a creator who left the project's team, or became a viewer, gets 403,
 * and so no placement check against the project's schemas), and only while the project
 * takes changes (423, 402, 409; share-locked as content writes lock it). A set whose
 * project was deleted no longer belongs to it and stays editable.
 * @throws AppError 403, 423, 402, 409
 */
export async function requireProjectEditable(conn: CommonQueryMethods, user: UserRow, projectId: number | null): Promise<void> {
  if (projectId === null) return;
  const project = await findProject(conn, projectId, user.id, "share");
  if (!project) return;
  if (!canEditProjectContent(user, project)) throw lostProjectAccess();
  const refusal = projectStateError(project);
  if (refusal) throw refusal;
}

export async function formSetFor(conn: CommonQueryMethods, id: number, user: UserRow, action: Action): Promise<FormSetRow> {
  await requireFormDesignerAccess(conn, user.id);
  const set = await conn.maybeOne(sql.type(formSetRow)`
    select ${formSetColumns} from form_sets fs where fs.id = ${id} and ${formSetReadable(user)}
    ${action === "edit" ? sql.fragment`for update of fs` : sql.fragment``}`);
  if (!set) throw notFound("Form set");
  await check(conn, user, set, action);
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
  await check(conn, user, found.fs, action);
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

