/**
 * A window's whole layout in one write (`PUT /form-windows/{id}/layout`): the element list
 * is checked as a whole in memory (`planLayout`), then written by one statement on its own
 * (`applyLayout`), which commits atomically without an explicit transaction: delete what
 * is left out, update what is named and differs from the stored row, insert what is new,
 * bump the window's version. The statement guards itself, so the checks made before it
 * need no locks held across round trips: it writes only when the window is still at the
 * version read (it takes the window's row lock, as every element write does, and re-reads
 * the version under it), when every named id is an element of the window, and when the
 * project (share-locked, as content writes lock it) still takes changes. Otherwise it
 * writes nothing and says so, and the caller finds out why. When the caller wrote from a
 * remembered context instead of reading it (windowContextCache.ts), the statement also
 * re-checks that context (`ContextGuard`), and that the writer may still change the
 * project's content (the access levels of api/policies/project.ts `canEditProjectContent`).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { accessFragment, latestSubscriptionJoin } from "../db/projects.ts";
import { formDesignerAccessFragment } from "./access.ts";
import { invalid, type FieldErrors } from "../errors.ts";
import { assignments, batchRow, batchRowColumns, columnList, differs } from "./elementColumns.ts";
import type { ElementInput } from "./elementInput.ts";
import { checkElement, type ElementValues, type StoredReferences, type WindowContext } from "./elements.ts";
import type { FormElementRow } from "./rows.ts";
import { schemaKeyFragment } from "./schemaFieldsCache.ts";
import type { RememberedElement } from "./windowContextCache.ts";

/** A checked layout: the elements' values in tab order 1…n, each with its id when it exists already. */
export interface LayoutPlan {
  elements: { id: number | undefined; values: ElementValues }[];
  /** The ids the list names → their index in the list (for errors). */
  named: Map<number, number>;
}

/**
 * Checks `elements` as a whole against the window (each as on its own route, ids and tab
 * orders distinct) and orders them: by the `tab_order` they carry, then their order in the
 * list, as 1…n. @throws 422 with every problem, under `elements.<index>.<field>`
 */
export async function planLayout(ctx: WindowContext, elements: readonly ElementInput[]): Promise<LayoutPlan> {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const named = new Map<number, number>();
  const seenTabs = new Map<number, number>();
  // Sorted already when the tab orders never decrease along the list (a designer sends them so).
  let listed = true;
  let lastTab = -Infinity;
  for (let index = 0; index < elements.length; index += 1) {
    const { id, tab_order: tab } = elements[index]!;
    if (id !== undefined) {
      if (named.has(id)) add(`elements.${index}.id`, `Element ${id} is listed twice.`);
      else named.set(id, index);
    }
    if (tab !== undefined) {
      if (seenTabs.has(tab)) add(`elements.${index}.tab_order`, `Tab order ${tab} is also given to element ${seenTabs.get(tab)! + 1}.`);
      seenTabs.set(tab, index);
    }
    const key = tab ?? Infinity;
    if (key < lastTab) listed = false;
    lastTab = key;
  }
  const order = elements.map((_, index) => index);
  if (!listed) order.sort((a, b) => (elements[a]!.tab_order ?? Infinity) - (elements[b]!.tab_order ?? Infinity) || a - b);
  const fields = elements.some((e) => "field_name" in e) ? await ctx.schemaFields() : null;
  const check = (stored: Map<number, StoredReferences>, found: FieldErrors) => {
    const planned: LayoutPlan["elements"] = [];
    for (let position = 0; position < order.length; position += 1) {
      const index = order[position]!;
      const element = elements[index]!;
      const kept = element.id === undefined ? undefined : stored.get(element.id);
      planned.push({ id: element.id, values: checkElement(element, ctx, fields, position + 1, found, `elements.${index}.`, kept) });
    }
    return planned;
  };
  const listErrors = { ...errors };
  let planned = check(new Map(), errors);
  // A placement sent back as it is stored keeps a reference a re-parse of the schema removed
  // (as a partial update does): only when a reference of a listed element failed are the
  // stored ones read, and the list checked again with them.
  const suspects = [...named].filter(([, index]) => referenceKeys.some((key) => errors[`elements.${index}.${key}`])).map(([id]) => id);
  if (suspects.length) {
    const stored = await ctx.storedReferences(suspects);
    if (stored.size) {
      for (const key of Object.keys(errors)) delete errors[key];
      Object.assign(errors, listErrors);
      planned = check(stored, errors);
    }
  }
  if (Object.keys(errors).length) throw invalid(errors);
  return { elements: planned, named };
}

/** The element fields that name the schema (see elements.ts `checkElement`). */
const referenceKeys = ["field_name", "link_table", "link_field", "link_display_field"] as const;

/** The 422 for ids the list names that are not elements of the window. */
export function strayIdsError(plan: LayoutPlan, strayIds: readonly number[]) {
  const errors: FieldErrors = {};
  for (const id of strayIds) errors[`elements.${plan.named.get(id)}.id`] = [`Element ${id} is not an element of this window.`];
  return invalid(errors);
}

/**
 * The context a write was checked against when the caller did not read it just before (a
 * window snapshot, windowContextCache.ts): the write happens only while it still holds.
 */
export interface ContextGuard {
  /** The writer, who must still have form designer access and may still change the project's content. */
  userId: number;
  /** Whether the writer is a super admin (who changes any project's content). */
  superAdmin: boolean;
  /** Row versions (`xmin`) of the window and of its set as remembered. */
  windowXmin: string;
  setId: number;
  setXmin: string;
  /** The project's grid (null: no snapping) as remembered. */
  grid: number | null;
  /** The schema key the list's field placements were checked under; null when it places none. */
  schemaKey: string | null;
  schemaId: number | null;
}

const outcomeRow = z.object({
  version: z.number().nullable(),
  updated_at: z.date().nullable(),
  /** The window's new row version. */
  xmin: z.string().nullable(),
  stray: z.array(z.number()),
  /** Named elements as stored before: id, created_at and updated_at in ms, whether the write changes it. */
  named: z.array(z.tuple([z.number(), z.number(), z.number(), z.boolean()])),
  /** New elements: id and tab order. */
  added: z.array(z.tuple([z.number(), z.number()])),
});

export type LayoutOutcome =
  | { written: true; version: number; updated_at: Date; xmin: string; elements: FormElementRow[]; remembered: Map<number, RememberedElement> }
  | { written: false; strayIds: number[] };

/** `ts` as whole milliseconds since the epoch (as the driver reads a timestamptz: truncated). */
const epochMs = (column: ReturnType<typeof sql.identifier>) => sql.fragment`(extract(epoch from date_trunc('milliseconds', ${column})) * 1000)::int8`;

/**
 * Writes `plan` to window `windowId` if it is still at `version`, every named id is one of
 * its elements, project `projectId` (null: none) is not locked, expired or archived, and
 * `guard` (when given) still holds. Returns the window's new version and its elements in
 * tab order, or what was not written.
 *
 * `remembered`: the window's elements as this process last wrote them, with `guard` (while
 * it holds, no element has been written since). When it names every id of the list, the
 * statement leaves out the stray-id check and the read of the named elements' dates, and
 * their dates come from memory: an element keeps its `updated_at` when its values are the
 * same text as before, as the statement's own compare (`differs`) leaves it unwritten.
 */
export async function applyLayout(
  conn: CommonQueryMethods,
  windowId: number,
  version: number,
  projectId: number | null,
  plan: LayoutPlan,
  guard: ContextGuard | null = null,
  remembered: ReadonlyMap<number, RememberedElement> | null = null,
): Promise<LayoutOutcome> {
  // One JSON parameter for the batch: a row per element, its id and values by position,
  // trailing nulls left out; each row's values as text are also what the next write compares.
  const rows = plan.elements.map(({ id, values }) => JSON.stringify(batchRow(id ?? null, values)));
  const known = guard !== null && remembered !== null && [...plan.named.keys()].every((id) => remembered.has(id));
  // The sub-statements share one snapshot and PostgreSQL runs a data-modifying CTE when it is
  // read: `changed` reads `removed` and `added` reads both (the always-true counts), so the
  // delete runs before the updates and the updates before the inserts. Inserts first queued a
  // deferred unique recheck of tab_order per row, which the delete would then have made moot.
  const out = await conn.one(sql.prepared("forms_layout_write", outcomeRow)`
    with x as materialized (
      select ${batchRowColumns} from jsonb_array_elements(${`[${rows.join(",")}]`}::jsonb) r
    ), stray as materialized (
      select x.id from x where not ${known}::boolean and x.id is not null
        and not exists (select 1 from form_elements e where e.id = x.id and e.form_window_id = ${windowId})
    ), project as (
      select p.is_locked or p.archived_at is not null or coalesce(s.expires_at <= now(), false) as refuses
      from projects p ${latestSubscriptionJoin}
      where p.id = ${projectId}::int8 and p.deleted_at is null
      for share of p
    ), fresh as (
      select ${guard === null}::boolean or (
        ${formDesignerAccessFragment(guard?.userId ?? 0)}
        and (${guard?.superAdmin ?? false}::boolean or not exists (select 1 from projects p where p.id = ${projectId}::int8 and p.deleted_at is null
          and not coalesce((${accessFragment(guard?.userId ?? 0)}) in ('owner', 'admin', 'member'), false)))
        and exists (select 1 from form_sets fs where fs.id = ${guard?.setId ?? null}::int8 and fs.xmin = ${guard?.setXmin ?? null}::xid)
        and ${guard?.grid ?? null}::int is not distinct from (select case when p.form_designer_snap_to_grid then p.form_designer_grid_size end
          from projects p where p.id = ${projectId}::int8 and p.deleted_at is null)
        and (${guard?.schemaKey ?? null}::text is null
          or ${schemaKeyFragment(sql.fragment`${projectId}::int8`, sql.fragment`${guard?.schemaId ?? null}::int8`)} = ${guard?.schemaKey ?? null}::text)
      ) as holds
    ), bumped as (
      -- The window's row version is compared here, under its row lock, so a change committed
      -- since the statement's snapshot is seen too.
      update form_windows set version = version + 1, updated_at = now()
      where id = ${windowId} and version = ${version} and (${guard?.windowXmin ?? null}::xid is null or xmin = ${guard?.windowXmin ?? null}::xid)
        and (select holds from fresh)
        and not exists (select 1 from stray) and not exists (select 1 from project where refuses)
      returning version, updated_at, xmin::text as xmin
    ), removed as (
      delete from form_elements e
      where e.form_window_id = ${windowId} and not exists (select 1 from x where x.id = e.id) and exists (select 1 from bumped)
      returning 1
    ), changed as (
      update form_elements e set ${assignments}, updated_at = now()
      from x where e.id = x.id and e.form_window_id = ${windowId} and ${differs} and exists (select 1 from bumped) and (select count(*) from removed) >= 0
      returning 1
    ), added as (
      insert into form_elements (form_window_id, ${columnList})
      select ${windowId}, ${columnList} from x where x.id is null and exists (select 1 from bumped)
        and (select count(*) from removed) + (select count(*) from changed) >= 0
      returning id, tab_order
    )
    select (select version from bumped) as version, (select updated_at from bumped) as updated_at, (select xmin from bumped) as xmin,
      (select coalesce(json_agg(id), '[]') from stray) as stray,
      (select coalesce(json_agg(json_build_array(e.id, ${epochMs(sql.identifier(["e", "created_at"]))}, ${epochMs(sql.identifier(["e", "updated_at"]))}, ${differs})), '[]')
        from form_elements e join x on x.id = e.id where not ${known}::boolean and e.form_window_id = ${windowId}) as named,
      (select coalesce(json_agg(json_build_array(id, tab_order)), '[]') from added) as added`);
  if (out.version === null || out.updated_at === null || out.xmin === null) return { written: false, strayIds: out.stray };
  const now = out.updated_at;
  const stored = new Map(out.named.map(([id, created, updated, changes]) => [id, { created_at: new Date(created), updated_at: changes ? now : new Date(updated) }]));
  const addedIds = new Map(out.added.map(([id, tabOrder]) => [tabOrder, id]));
  const next = new Map<number, RememberedElement>();
  // The checked values become the answer's rows (the plan is not used after the write).
  const elements = plan.elements.map(({ id, values }, i) => {
    const text = valuesText(rows[i]!);
    const before = id === undefined ? undefined : known ? fromMemory(remembered.get(id)!, text, now) : stored.get(id);
    const row = values as unknown as FormElementRow;
    row.id = id ?? addedIds.get(values.tab_order as number)!;
    row.form_window_id = windowId;
    row.created_at = before?.created_at ?? now;
    row.updated_at = before?.updated_at ?? now;
    next.set(row.id, { text, created_at: row.created_at, updated_at: row.updated_at });
    return row;
  });
  return { written: true, version: out.version, updated_at: now, xmin: out.xmin, elements, remembered: next };
}

/** A batch row's text without its id (`[12,"button_save",…]` → `,"button_save",…]`): the element's values. */
const valuesText = (row: string) => row.slice(row.indexOf(","));

/** A remembered element's dates after a write that sends it as `text`: unchanged text, unchanged row. */
const fromMemory = (before: RememberedElement, text: string, now: Date) => ({
  created_at: before.created_at,
  updated_at: before.text === text ? before.updated_at : now,
});
