/**
 * `PUT /form-windows/{id}/layout` in one or two round trips. When this process wrote the
 * window last, at the version the client sends, the write goes out alone, checked in memory
 * against the remembered context and guarded by it in the statement (windowContextCache.ts;
 * the guard also re-checks that the caller may still change the project's content).
 * Otherwise, or when that write finds the context changed, one read gathers everything the
 * checks need (the window, its set, access, the project's grid and state, and the schema's
 * fields when the list places fields and this process has not cached them:
 * schemaFieldsCache.ts), made without locks, then the guarded write of
 * shared/forms/layoutWrite.ts re-checks the version and the project's state under its own
 * locks. The checks answer in the order every window write answers (402, 404, 403, the
 * project's 423/402/409, then 409 `version_conflict`, then 422), always from a read: a write
 * from memory that would answer anything but success gives way to the read. When the write
 * finds things changed since the read, the read is made again to tell why.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { AppError, conflict, notFound } from "../../../shared/errors.ts";
import { formDesignerAccessFragment, formDesignerLocked, requireFormDesignerAccess } from "../../../shared/forms/access.ts";
import type { ElementInput } from "../../../shared/forms/elementInput.ts";
import { WindowContext } from "../../../shared/forms/elements.ts";
import { applyLayout, planLayout, strayIdsError, type LayoutPlan } from "../../../shared/forms/layoutWrite.ts";
import { formSetRow, formWindowRow, type FormElementRow, type FormWindowRow } from "../../../shared/forms/rows.ts";
import { schemaFieldsOf, schemaTableRow, schemaTablesJson, type SchemaFields } from "../../../shared/forms/schemaFields.ts";
import { cachedSchemaFields, lastSchemaKey, rememberSchemaFields, schemaKeyFragment } from "../../../shared/forms/schemaFieldsCache.ts";
import { forgetWindowSnapshot, rememberWindowSnapshot, windowSnapshot, type WindowSnapshot } from "../../../shared/forms/windowContextCache.ts";
import { accessFragment, latestSubscriptionJoin, projectAccessLevels } from "../../../shared/db/projects.ts";
import { projectStateError } from "../../../shared/projects/writable.ts";
import { authorize } from "../../policies/authorize.ts";
import { canEditFormSet, formSetReadable } from "../../policies/formSet.ts";
import { canEditProjectContent } from "../../policies/project.ts";
import { hasRole, isSiteAdmin } from "../../policies/roles.ts";
import { lostProjectAccess } from "./load.ts";

const jsonDates = { created_at: z.coerce.date(), updated_at: z.coerce.date() };
const targetRow = z.object({
  has_access: z.boolean(),
  w: formWindowRow.extend(jsonDates),
  fs: formSetRow.extend(jsonDates),
  grid: z.number().nullable(),
  /** The project's state and the caller's access to it (shared/db/projects.ts); null when the set has no live project. */
  is_locked: z.boolean().nullable(),
  project_owner_id: z.number().nullable(),
  project_access: z.enum(projectAccessLevels).nullable(),
  archived_at: z.date().nullable(),
  subscription_expires_at: z.date().nullable(),
  /** The schema key of the set's placements (shared/forms/schemaFieldsCache.ts); null without a project. */
  schema_key: z.string().nullable(),
  /** The schemas' tables, when the list places fields and this process has none cached under `schema_key`. */
  tables: z.array(schemaTableRow).nullable(),
  /** Row versions of the window and the set, for the snapshot a write leaves (windowContextCache.ts). */
  window_xmin: z.string(),
  set_xmin: z.string(),
});

/** The window read for a write: its checks passed, and what a snapshot of it needs. */
interface WritableWindow {
  ctx: WindowContext;
  windowXmin: string;
  setXmin: string;
  schemaKey: string | null;
}

/** How often a write that found things changed since its read is tried again before answering 409. */
const ATTEMPTS = 3;

/**
 * The window to write with its checks passed (402, 404, 403 for another's set or a project
 * whose content the caller may no longer change, 423/402/409), from one query.
 * A named statement: planning it cost more than running it. Site administrators read every
 * set, so their condition is another text and another statement.
 */
async function writableWindow(pool: DatabasePool, id: number, user: UserRow, placesFields: boolean): Promise<WritableWindow> {
  const known = lastSchemaKey(id);
  const found = await pool.maybeOne(sql.prepared(isSiteAdmin(user) ? "forms_layout_window_admin" : "forms_layout_window", targetRow)`
    select ${formDesignerAccessFragment(user.id)} as has_access, to_jsonb(w) as w, to_jsonb(fs) as fs,
      case when p.form_designer_snap_to_grid then p.form_designer_grid_size end as grid,
      p.is_locked, p.owner_id as project_owner_id, ${accessFragment(user.id)} as project_access, p.archived_at, s.expires_at as subscription_expires_at, k.schema_key, w.xmin::text as window_xmin, fs.xmin::text as set_xmin,
      case when ${placesFields}::boolean and k.schema_key is not null and k.schema_key is distinct from ${known}::text
        then ${schemaTablesJson(sql.fragment`fs.project_id`, sql.fragment`fs.schema_id`)} end as tables
    from form_windows w join form_sets fs on fs.id = w.form_set_id
    left join projects p on p.id = fs.project_id and p.deleted_at is null
    ${latestSubscriptionJoin}
    left join lateral (
      select case when fs.project_id is not null then ${schemaKeyFragment(sql.fragment`fs.project_id`, sql.fragment`fs.schema_id`)} end as schema_key
    ) k on true
    where w.id = ${id} and ${formSetReadable(user)}`);
  if (!found) {
    await requireFormDesignerAccess(pool, user.id);
    throw notFound("Form window");
  }
  if (!found.has_access) throw formDesignerLocked();
  authorize(canEditFormSet(user, found.fs), "Only the form set's creator may change it.");
  if (found.is_locked !== null) {
    if (!canEditProjectContent(user, { owner_id: found.project_owner_id!, access: found.project_access })) throw lostProjectAccess();
    const refusal = projectStateError({ is_locked: found.is_locked, archived_at: found.archived_at, subscription_expires_at: found.subscription_expires_at });
    if (refusal) throw refusal;
  }
  const fields = found.schema_key === null ? undefined : rememberSchemaFields(id, found.schema_key, found.tables ? schemaFieldsOf(found.tables) : undefined);
  return { ctx: new WindowContext(pool, found.fs, found.w, found.grid, fields), windowXmin: found.window_xmin, setXmin: found.set_xmin, schemaKey: found.schema_key };
}

/** The window as written and its elements; `tables`: the schema's fields the placements were checked against (none when the list places no field). */
type Saved = { window: FormWindowRow; elements: FormElementRow[]; tables?: SchemaFields | undefined };

/**
 * The write from window `id`'s snapshot, when `user` wrote it last from this process at
 * `version`: `saved`, or nothing with the ids the write found stray. Nothing is answered from
 * memory but success: a list the remembered context refuses, or a write that finds it out of
 * date, leaves the answer to a read.
 */
async function writeFromSnapshot(pool: DatabasePool, id: number, user: UserRow, version: number, elements: readonly ElementInput[], placesFields: boolean) {
  const snapshot = windowSnapshot(id, user.id, version);
  if (!snapshot) return { strayIds: [] };
  const fields = snapshot.schemaKey === null ? undefined : cachedSchemaFields(snapshot.schemaKey);
  // Without the fields cached, the context would read them: the read decides instead.
  if (placesFields && snapshot.set.project_id !== null && !fields) return { strayIds: [] };
  let plan: LayoutPlan;
  try {
    plan = await planLayout(new WindowContext(pool, snapshot.set, snapshot.window, snapshot.grid, fields), elements);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { strayIds: [] };
  }
  const guard = {
    userId: user.id,
    superAdmin: hasRole(user, "super_admin"),
    windowXmin: snapshot.windowXmin,
    setId: snapshot.set.id,
    setXmin: snapshot.setXmin,
    grid: snapshot.grid,
    schemaKey: placesFields ? snapshot.schemaKey : null,
    schemaId: snapshot.set.schema_id,
  };
  const outcome = await applyLayout(pool, id, version, snapshot.set.project_id, plan, guard, snapshot.elements);
  if (!outcome.written) {
    forgetWindowSnapshot(id);
    return { strayIds: outcome.strayIds };
  }
  const saved = { window: { ...snapshot.window, version: outcome.version, updated_at: outcome.updated_at }, elements: outcome.elements, tables: placesFields ? fields : undefined };
  rememberWindowSnapshot({ ...snapshot, window: saved.window, windowXmin: outcome.xmin, elements: outcome.remembered });
  return { saved, strayIds: [] };
}

/**
 * Replaces window `id`'s elements with `elements` if it is at `version`.
 * @throws 402, 404, 403, 423, 409 `version_conflict`, 422
 */
export async function saveLayout(
  pool: DatabasePool,
  id: number,
  user: UserRow,
  version: number,
  elements: readonly ElementInput[],
): Promise<Saved> {
  const placesFields = elements.some((e) => "field_name" in e);
  const quick = await writeFromSnapshot(pool, id, user, version, elements, placesFields);
  if (quick.saved) return quick.saved;
  let strayIds = quick.strayIds;
  for (let attempt = 1; ; attempt += 1) {
    const read = await writableWindow(pool, id, user, placesFields);
    const { ctx } = read;
    if (ctx.window.version !== version || attempt > ATTEMPTS) {
      throw conflict(`The window changed since version ${version} (it is at version ${ctx.window.version}); read it again and re-apply the change.`, "version_conflict");
    }
    const plan = await planLayout(ctx, elements);
    // Ids of other windows count once the version is known to be current, as under a lock.
    if (strayIds.length) throw strayIdsError(plan, strayIds);
    const outcome = await applyLayout(pool, ctx.window.id, version, ctx.set.project_id, plan);
    if (outcome.written) {
      const window = { ...ctx.window, version: outcome.version, updated_at: outcome.updated_at };
      rememberWindowSnapshot(snapshotOf(user, read, window, outcome.xmin, outcome.remembered));
      return { window, elements: outcome.elements, tables: placesFields ? ((await ctx.schemaFields()) ?? undefined) : undefined };
    }
    strayIds = outcome.strayIds;
  }
}

/** The snapshot a write from a read leaves: the context read, the window as written. */
function snapshotOf(user: UserRow, read: WritableWindow, window: FormWindowRow, windowXmin: string, elements: WindowSnapshot["elements"]): WindowSnapshot {
  return { userId: user.id, set: read.ctx.set, window, windowXmin, setXmin: read.setXmin, grid: read.ctx.grid, schemaKey: read.schemaKey, elements };
}
