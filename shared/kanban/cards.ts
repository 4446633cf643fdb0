/**
 * Kanban cards in the database and their positions. Positions in a column are 0…n−1: a
 * card created or moved to index `order` lands there and the cards from that index on
 * shift down; the column it left closes the gap. Call every function that changes
 * positions after `lockBoard` (store.ts) in the same transaction.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { conflict } from "../errors.ts";
import { MAX_CARDS_PER_COLUMN, type ColumnRow } from "./store.ts";

export const priorities = ["low", "medium", "high"] as const;

export const cardRow = z.object({
  id: z.number(),
  board_id: z.number(),
  column_id: z.number(),
  position: z.number(),
  title: z.string(),
  description: z.string().nullable(),
  priority: z.enum(priorities),
  due_date: z.string().nullable(),
  estimated_hours: z.number().nullable(),
  created_by: z.number().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type CardRow = z.infer<typeof cardRow>;

export const cardColumns = sql.fragment`k.id, k.board_id, k.column_id, k.position, k.title, k.description, k.priority,
  to_char(k.due_date, 'YYYY-MM-DD') as due_date, k.estimated_hours::float8 as estimated_hours, k.created_by, k.created_at, k.updated_at`;

/** A card with the project of its board, or null. */
export async function findCard(conn: CommonQueryMethods, id: number): Promise<(CardRow & { project_id: number }) | null> {
  return conn.maybeOne(sql.type(cardRow.extend({ project_id: z.number() }))`
    select ${cardColumns}, b.project_id from kanban_cards k join kanban_boards b on b.id = k.board_id where k.id = ${id}`);
}

/** The cards of some boards, by column and position. */
export async function listCards(conn: CommonQueryMethods, boardIds: readonly number[]): Promise<readonly CardRow[]> {
  if (boardIds.length === 0) return [];
  return conn.any(sql.type(cardRow)`
    select ${cardColumns} from kanban_cards k where k.board_id = any(${sql.array([...boardIds], "int8")}) order by k.column_id, k.position`);
}

/**
 * @throws 409 wip_limit_reached when `column` holds its WIP limit of cards or more, 409
 * column_full when it holds MAX_CARDS_PER_COLUMN (what a project bundle carries back in).
 */
export function assertRoom(column: ColumnRow): void {
  if (column.card_count >= MAX_CARDS_PER_COLUMN) {
    throw conflict(`The column "${column.name}" holds ${MAX_CARDS_PER_COLUMN} cards, the most a column may hold.`, "column_full");
  }
  if (column.wip_limit !== null && column.card_count >= column.wip_limit) {
    throw conflict(`The column "${column.name}" holds its WIP limit of ${column.wip_limit} cards.`, "wip_limit_reached");
  }
}

/** The card write form as stored (all optional on update). */
export interface CardFields {
  title?: string;
  description?: string | null;
  priority?: (typeof priorities)[number];
  due_date?: string | null;
  estimated_hours?: number | null;
}

/** Creates a card at index `order` of `column` (default: at the end). @throws 409 when the column is full */
export async function insertCard(tx: CommonQueryMethods, column: ColumnRow, order: number | undefined, userId: number, fields: CardFields & { title: string }): Promise<number> {
  assertRoom(column);
  const position = Math.max(0, Math.min(order ?? column.card_count, column.card_count));
  await tx.query(sql.type(ignoredRow)`update kanban_cards set position = position + 1 where column_id = ${column.id} and position >= ${position}`);
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into kanban_cards (board_id, column_id, position, title, description, priority, due_date, estimated_hours, created_by)
    values (${column.board_id}, ${column.id}, ${position}, ${fields.title}, ${fields.description ?? null}, ${fields.priority ?? "medium"},
      ${fields.due_date ?? null}::date, ${fields.estimated_hours ?? null}, ${userId})
    returning id`);
}

/** Writes the given fields of a card. */
export async function updateCardFields(tx: CommonQueryMethods, id: number, fields: CardFields): Promise<void> {
  const sets = [sql.fragment`updated_at = now()`];
  if (fields.title !== undefined) sets.push(sql.fragment`title = ${fields.title}`);
  if (fields.description !== undefined) sets.push(sql.fragment`description = ${fields.description}`);
  if (fields.priority !== undefined) sets.push(sql.fragment`priority = ${fields.priority}`);
  if (fields.due_date !== undefined) sets.push(sql.fragment`due_date = ${fields.due_date}::date`);
  if (fields.estimated_hours !== undefined) sets.push(sql.fragment`estimated_hours = ${fields.estimated_hours}`);
  await tx.query(sql.type(ignoredRow)`update kanban_cards set ${sql.join(sets, sql.fragment`, `)} where id = ${id}`);
}

/**
 * Moves `card` to index `order` of `target` (clamped to the column), shifting the others.
 * Returns the index it landed at. @throws 409 when another column is full
 */
export async function moveCard(tx: CommonQueryMethods, card: CardRow, target: ColumnRow, order: number): Promise<number> {
  if (target.id === card.column_id) {
    const position = Math.max(0, Math.min(order, target.card_count - 1));
    if (position < card.position) {
      await tx.query(sql.type(ignoredRow)`
        update kanban_cards set position = position + 1 where column_id = ${target.id} and position >= ${position} and position < ${card.position}`);
    } else if (position > card.position) {
      await tx.query(sql.type(ignoredRow)`
        update kanban_cards set position = position - 1 where column_id = ${target.id} and position > ${card.position} and position <= ${position}`);
    }
    if (position !== card.position) await tx.query(sql.type(ignoredRow)`update kanban_cards set position = ${position}, updated_at = now() where id = ${card.id}`);
    return position;
  }
  assertRoom(target);
  const position = Math.max(0, Math.min(order, target.card_count));
  await tx.query(sql.type(ignoredRow)`update kanban_cards set position = position - 1 where column_id = ${card.column_id} and position > ${card.position}`);
  await tx.query(sql.type(ignoredRow)`update kanban_cards set position = position + 1 where column_id = ${target.id} and position >= ${position}`);
  await tx.query(sql.type(ignoredRow)`update kanban_cards set column_id = ${target.id}, position = ${position}, updated_at = now() where id = ${card.id}`);
  return position;
}

/** Deletes a card (its comments, attachments and activities go with it) and closes the gap. */
export async function deleteCard(tx: CommonQueryMethods, card: CardRow): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from kanban_cards where id = ${card.id}`);
  await tx.query(sql.type(ignoredRow)`update kanban_cards set position = position - 1 where column_id = ${card.column_id} and position > ${card.position}`);
}

/** The users among `userIds` who may view project `projectId` (its owner and the members of its teams). */
export async function projectPeople(conn: CommonQueryMethods, projectId: number, userIds: readonly number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const ids = await conn.anyFirst(sql.type(z.object({ id: z.number() }))`
    select u.id from users u where u.id = any(${sql.array([...userIds], "int8")}) and (
      exists (select 1 from projects p where p.id = ${projectId} and p.owner_id = u.id)
      or exists (select 1 from team_projects tp join team_members tm on tm.team_id = tp.team_id where tp.project_id = ${projectId} and tm.user_id = u.id))`);
  return new Set(ids);
}

/** Replaces a card's assignees with `userIds` (those already assigned keep their role); returns the ids added. */
export async function setAssignees(tx: CommonQueryMethods, cardId: number, userIds: readonly number[]): Promise<number[]> {
  await tx.query(sql.type(ignoredRow)`delete from kanban_card_assignees where card_id = ${cardId} and user_id <> all(${sql.array([...userIds], "int8")})`);
  if (userIds.length === 0) return [];
  return [
    ...(await tx.anyFirst(sql.type(z.object({ user_id: z.number() }))`
      insert into kanban_card_assignees (card_id, user_id) select ${cardId}, unnest(${sql.array([...userIds], "int8")})
      on conflict (card_id, user_id) do nothing returning user_id`)),
  ];
}

/** Replaces a card's labels with `labelIds`. */
export async function setLabels(tx: CommonQueryMethods, cardId: number, labelIds: readonly number[]): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from kanban_card_labels where card_id = ${cardId} and label_id <> all(${sql.array([...labelIds], "int8")})`);
  if (labelIds.length === 0) return;
  await tx.query(sql.type(ignoredRow)`
    insert into kanban_card_labels (card_id, label_id) select ${cardId}, unnest(${sql.array([...labelIds], "int8")}) on conflict do nothing`);
}

/** The ids among `labelIds` that are labels of board `boardId`. */
export async function boardLabelIds(conn: CommonQueryMethods, boardId: number, labelIds: readonly number[]): Promise<Set<number>> {
  if (labelIds.length === 0) return new Set();
  return new Set(
    await conn.anyFirst(sql.type(z.object({ id: z.number() }))`
      select id from kanban_labels where board_id = ${boardId} and id = any(${sql.array([...labelIds], "int8")})`),
  );
}

/** Sorted user ids assigned to a card, and sorted label ids on it (for the `changes` of an update). */
export async function cardLinks(conn: CommonQueryMethods, cardId: number): Promise<{ assignees: number[]; labels: number[] }> {
  const row = await conn.one(sql.type(z.object({ assignees: z.array(z.coerce.number()), labels: z.array(z.coerce.number()) }))`
    select
      coalesce((select array_agg(user_id order by user_id) from kanban_card_assignees where card_id = ${cardId}), '{}')::int8[] as assignees,
      coalesce((select array_agg(label_id order by label_id) from kanban_card_labels where card_id = ${cardId}), '{}')::int8[] as labels`);
  return row;
}

/** An assignment with the project of its card, or null. */
export async function findAssignment(conn: CommonQueryMethods, id: number): Promise<{ id: number; card_id: number; user_id: number; project_id: number } | null> {
  return conn.maybeOne(sql.type(z.object({ id: z.number(), card_id: z.number(), user_id: z.number(), project_id: z.number() }))`
    select a.id, a.card_id, a.user_id, b.project_id from kanban_card_assignees a
    join kanban_cards k on k.id = a.card_id join kanban_boards b on b.id = k.board_id where a.id = ${id}`);
}

/** What `assignUser` did: the assignment, whether it is new, and its kanban role before (null when new) and now. */
export interface Assigned {
  id: number;
  user_id: number;
  created: boolean;
  old_role: string | null;
  role: string | null;
}

/**
 * Assigns a user to a card with a kanban role; a second assignment of the same user changes
 * the role, or keeps it when `role` is undefined (null clears it). Call under the board lock.
 */
export async function assignUser(tx: CommonQueryMethods, cardId: number, userId: number, role: string | null | undefined): Promise<Assigned> {
  const keep = role === undefined;
  return tx.one(sql.type(z.object({ id: z.number(), user_id: z.number(), created: z.boolean(), old_role: z.string().nullable(), role: z.string().nullable() }))`
    with prior as (select kanban_role from kanban_card_assignees where card_id = ${cardId} and user_id = ${userId})
    insert into kanban_card_assignees (card_id, user_id, kanban_role) values (${cardId}, ${userId}, ${role ?? null})
    on conflict (card_id, user_id) do update
      set kanban_role = case when ${keep} then kanban_card_assignees.kanban_role else excluded.kanban_role end
    returning id, user_id, (xmax = 0) as created, (select kanban_role from prior) as old_role, kanban_role as role`);
}

/** Removes an assignment. */
export async function unassign(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from kanban_card_assignees where id = ${id}`);
}
