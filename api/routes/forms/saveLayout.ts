/**
 * `PUT /form-windows/{id}/layout` in two round trips: one read of everything the checks
 * need (the window, its set, access, the project's grid and state, and the schema's fields
 * when the list places fields and this process has not cached them: schemaFieldsCache.ts),
 * made without locks, then the guarded write of
 * shared/forms/layoutWrite.ts, which re-checks the version and the project's state under
 * its own locks. The checks answer in the order every window write answers (402, 404, 403,
 * the project's 423/402/409, then 409 `version_conflict`, then 422). When the write finds
 * things changed since the read, the read is made again to tell why.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { conflict, notFound } from "../../../shared/errors.ts";
import { formDesignerAccessFragment, formDesignerLocked, requireFormDesignerAccess } from "../../../shared/forms/access.ts";
import type { ElementInput } from "../../../shared/forms/elementInput.ts";
import { WindowContext } from "../../../shared/forms/elements.ts";
import { applyLayout, planLayout, strayIdsError } from "../../../shared/forms/layoutWrite.ts";
import { formSetRow, formWindowRow, type FormElementRow, type FormWindowRow } from "../../../shared/forms/rows.ts";
import { schemaFieldsOf, schemaTableRow, schemaTablesJson } from "../../../shared/forms/schemaFields.ts";
import { lastSchemaKey, rememberSchemaFields, schemaKeyFragment } from "../../../shared/forms/schemaFieldsCache.ts";
import { latestSubscriptionJoin } from "../../../shared/db/projects.ts";
import { projectStateError } from "../../../shared/projects/writable.ts";
import { authorize } from "../../policies/authorize.ts";
import { canEditFormSet, formSetReadable } from "../../policies/formSet.ts";
import { isSiteAdmin } from "../../policies/roles.ts";

const jsonDates = { created_at: z.coerce.date(), updated_at: z.coerce.date() };
const targetRow = z.object({
  has_access: z.boolean(),
  w: formWindowRow.extend(jsonDates),
  fs: formSetRow.extend(jsonDates),
  grid: z.number().nullable(),
  /** The project's state; null when the set has no live project. */
  is_locked: z.boolean().nullable(),
  archived_at: z.date().nullable(),
  subscription_expires_at: z.date().nullable(),
  /** The schema key of the set's placements (shared/forms/schemaFieldsCache.ts); null without a project. */
  schema_key: z.string().nullable(),
  /** The schemas' tables, when the list places fields and this process has none cached under `schema_key`. */
  tables: z.array(schemaTableRow).nullable(),
});

/** How often a write that found things changed since its read is tried again before answering 409. */
const ATTEMPTS = 3;

/**
 * The window to write with its checks passed (402, 404, 403, 423/402/409), from one query.
 * A named statement: planning it cost more than running it. Site administrators read every
 * set, so their condition is another text and another statement.
 */
async function writableWindow(pool: DatabasePool, id: number, user: UserRow, placesFields: boolean): Promise<WindowContext> {
  const known = lastSchemaKey(id);
  const found = await pool.maybeOne(sql.prepared(isSiteAdmin(user) ? "forms_layout_window_admin" : "forms_layout_window", targetRow)`
    select ${formDesignerAccessFragment(user.id)} as has_access, to_jsonb(w) as w, to_jsonb(fs) as fs,
      case when p.form_designer_snap_to_grid then p.form_designer_grid_size end as grid,
      p.is_locked, p.archived_at, s.expires_at as subscription_expires_at, k.schema_key,
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
    const refusal = projectStateError({ is_locked: found.is_locked, archived_at: found.archived_at, subscription_expires_at: found.subscription_expires_at });
    if (refusal) throw refusal;
  }
  const fields = found.schema_key === null ? undefined : rememberSchemaFields(id, found.schema_key, found.tables ? schemaFieldsOf(found.tables) : undefined);
  return new WindowContext(pool, found.fs, found.w, found.grid, fields);
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
): Promise<{ window: FormWindowRow; elements: FormElementRow[] }> {
  const placesFields = elements.some((e) => "field_name" in e);
  let strayIds: number[] = [];
  for (let attempt = 1; ; attempt += 1) {
    const ctx = await writableWindow(pool, id, user, placesFields);
    if (ctx.window.version !== version || attempt > ATTEMPTS) {
      throw conflict(`The window changed since version ${version} (it is at version ${ctx.window.version}); read it again and re-apply the change.`, "version_conflict");
    }
    const plan = await planLayout(ctx, elements);
    // Ids of other windows count once the version is known to be current, as under a lock.
    if (strayIds.length) throw strayIdsError(plan, strayIds);
    const outcome = await applyLayout(pool, ctx.window.id, version, ctx.set.project_id, plan);
    if (outcome.written) return { window: { ...ctx.window, version: outcome.version, updated_at: outcome.updated_at }, elements: outcome.elements };
    strayIds = outcome.strayIds;
  }
}
