/**
 * Checks and writes shared by card creation and update: assignees must be people of the
 * project and labels labels of the card's board (422 on the field otherwise); an update
 * records `{old, new}` for each field that changed, an `updated` activity, an `assigned`
 * activity when people were added (who are told, shared/kanban/assignmentNotice.ts), and
 * `CardUpdated`.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { invalid } from "../../../shared/errors.ts";
import { recordActivity, type FieldChange } from "../../../shared/kanban/activities.ts";
import { boardLabelIds, cardLinks, projectPeople, setAssignees, setLabels, updateCardFields, type CardFields, type CardRow } from "../../../shared/kanban/cards.ts";
import { notifyAssigned } from "../../../shared/kanban/assignmentNotice.ts";
import { cardUpdated } from "../../../shared/kanban/events.ts";

/** The card write form's links. */
export interface CardLinksInput {
  assignees?: number[] | undefined;
  labels?: number[] | undefined;
}

/** @throws 422 on `assignees` or `labels` naming someone or something outside the project or board */
export async function checkLinks(conn: CommonQueryMethods, projectId: number, boardId: number, input: CardLinksInput): Promise<void> {
  const errors: Record<string, string[]> = {};
  if (input.assignees?.length) {
    const people = await projectPeople(conn, projectId, input.assignees);
    const strangers = input.assignees.filter((id) => !people.has(id));
    if (strangers.length) errors.assignees = [`These users are not members of the project: ${strangers.join(", ")}.`];
  }
  if (input.labels?.length) {
    const known = await boardLabelIds(conn, boardId, input.labels);
    const unknown = input.labels.filter((id) => !known.has(id));
    if (unknown.length) errors.labels = [`These labels are not labels of the board: ${unknown.join(", ")}.`];
  }
  if (Object.keys(errors).length) throw invalid(errors);
}

/** Who writes a card: the activity's actor and the assigner named in notices. */
export interface CardWriter {
  id: number;
  name: string;
}

/** Writes the links of a new card; records `assigned` and tells the assignees when it has any. */
export async function linkNewCard(tx: CommonQueryMethods, card: { id: number; title: string }, user: CardWriter, input: CardLinksInput): Promise<void> {
  if (input.assignees?.length) {
    await setAssignees(tx, card.id, input.assignees);
    await recordActivity(tx, card.id, user.id, "assigned", `assigned ${input.assignees.length} ${input.assignees.length === 1 ? "person" : "people"}`, {
      assignees: { old: [], new: [...input.assignees].sort((a, b) => a - b) },
    });
    await notifyAssigned(tx, { assigner: user, card }, input.assignees);
  }
  if (input.labels?.length) await setLabels(tx, card.id, input.labels);
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Applies an update to `card` (read under the board lock); returns the changes (empty when nothing changed). */
export async function applyCardUpdate(tx: CommonQueryMethods, card: CardRow, user: CardWriter, input: CardFields & CardLinksInput): Promise<Record<string, FieldChange>> {
  const userId = user.id;
  const changes: Record<string, FieldChange> = {};
  const fields: CardFields = {};
  for (const key of ["title", "description", "priority", "due_date", "estimated_hours"] as const) {
    const value = input[key];
    if (value === undefined || sameValue(card[key], value)) continue;
    changes[key] = { old: card[key], new: value };
    (fields as Record<string, unknown>)[key] = value;
  }
  if (Object.keys(fields).length) await updateCardFields(tx, card.id, fields);
  const before = await cardLinks(tx, card.id);
  let added: number[] = [];
  if (input.assignees !== undefined) {
    const next = [...input.assignees].sort((a, b) => a - b);
    if (!sameValue(before.assignees, next)) {
      added = await setAssignees(tx, card.id, next);
      changes.assignees = { old: before.assignees, new: next };
    }
  }
  if (input.labels !== undefined) {
    const next = [...input.labels].sort((a, b) => a - b);
    if (!sameValue(before.labels, next)) {
      await setLabels(tx, card.id, next);
      changes.labels = { old: before.labels, new: next };
    }
  }
  if (Object.keys(changes).length === 0) return changes;
  // Links alone changed: the card is still updated.
  if (Object.keys(fields).length === 0) await updateCardFields(tx, card.id, {});
  await recordActivity(tx, card.id, userId, "updated", `updated ${Object.keys(changes).join(", ")}`, changes);
  if (added.length) {
    await recordActivity(tx, card.id, userId, "assigned", `assigned ${added.length} ${added.length === 1 ? "person" : "people"}`, {
      assignees: changes.assignees!,
    });
    await notifyAssigned(tx, { assigner: user, card: { id: card.id, title: fields.title ?? card.title } }, added);
  }
  await cardUpdated(tx, card.board_id, card.id, changes);
  return changes;
}
