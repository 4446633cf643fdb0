/**
 * Kanban boards and columns in the database. Every change of positions on a board (cards
 * created, moved or deleted, columns added, re-ordered or deleted) runs after `lockBoard`
 * in its transaction, so such changes on one board run one at a time and positions stay
 * 0…n−1; reads need no lock.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { conflict } from "../errors.ts";

/** A board holds at most this many columns, and a project at most this many boards: what a project bundle carries (bundle.ts). */
export const MAX_COLUMNS_PER_BOARD = 50;
export const MAX_BOARDS_PER_PROJECT = 100;
/** A column holds at most this many cards (with or without a WIP limit, which is at most this too): what a bundle's column carries. */
export const MAX_CARDS_PER_COLUMN = 10_000;

export const boardRow = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type BoardRow = z.infer<typeof boardRow>;

export const columnRow = z.object({
  id: z.number(),
  board_id: z.number(),
  name: z.string(),
  wip_limit: z.number().nullable(),
  position: z.number(),
  card_count: z.number(),
});
export type ColumnRow = z.infer<typeof columnRow>;

const columnColumns = sql.fragment`c.id, c.board_id, c.name, c.wip_limit, c.position,
  (select count(*)::int from kanban_cards k where k.column_id = c.id) as card_count`;

/** A board, or null. */
export async function findBoard(conn: CommonQueryMethods, id: number): Promise<BoardRow | null> {
  return conn.maybeOne(sql.type(boardRow)`select id, project_id, name, created_at, updated_at from kanban_boards where id = ${id}`);
}

/** The boards of a project, oldest first. */
export async function listBoards(conn: CommonQueryMethods, projectId: number): Promise<readonly BoardRow[]> {
  return conn.any(sql.type(boardRow)`select id, project_id, name, created_at, updated_at from kanban_boards where project_id = ${projectId} order by id`);
}

/** Takes the board's row lock for the rest of the transaction (see the module comment). */
export async function lockBoard(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`select 1 from kanban_boards where id = ${id} for update`);
}

/**
 * Serializes board creation in a project for the rest of the transaction, so the count
 * checked against MAX_BOARDS_PER_PROJECT stays true until the insert commits (the project's
 * share lock lets content changes run side by side).
 */
export async function lockProjectBoards(tx: CommonQueryMethods, projectId: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`select pg_advisory_xact_lock(hashtextextended(${`kanban_boards:${projectId}`}, 0))`);
}

/** How many boards a project holds. */
export async function countBoards(conn: CommonQueryMethods, projectId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from kanban_boards where project_id = ${projectId}`);
}

/** How many columns a board holds. */
export async function countColumns(conn: CommonQueryMethods, boardId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from kanban_columns where board_id = ${boardId}`);
}

/** Creates a board with columns named `columns`, in that order. */
export async function insertBoard(tx: CommonQueryMethods, projectId: number, userId: number, name: string, columns: readonly string[]): Promise<BoardRow> {
  const board = await tx.one(sql.type(boardRow)`
    insert into kanban_boards (project_id, name, created_by) values (${projectId}, ${name}, ${userId})
    returning id, project_id, name, created_at, updated_at`);
  if (columns.length) {
    await tx.query(sql.type(ignoredRow)`
      insert into kanban_columns (board_id, name, position)
      select ${board.id}, name, (ord - 1)::int from unnest(${sql.array([...columns], "text")}) with ordinality as x(name, ord)`);
  }
  return board;
}

/** Renames a board. */
export async function renameBoard(tx: CommonQueryMethods, id: number, name: string): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update kanban_boards set name = ${name}, updated_at = now() where id = ${id}`);
}

/** The columns of some boards in position order, with their card counts. */
export async function listColumns(conn: CommonQueryMethods, boardIds: readonly number[]): Promise<readonly ColumnRow[]> {
  if (boardIds.length === 0) return [];
  return conn.any(sql.type(columnRow)`
    select ${columnColumns} from kanban_columns c where c.board_id = any(${sql.array([...boardIds], "int8")}) order by c.board_id, c.position`);
}

/** A column with its card count, or null. */
export async function findColumn(conn: CommonQueryMethods, id: number): Promise<ColumnRow | null> {
  return conn.maybeOne(sql.type(columnRow)`select ${columnColumns} from kanban_columns c where c.id = ${id}`);
}

/** A column and the project of its board, or null. */
export async function findColumnWithProject(conn: CommonQueryMethods, id: number): Promise<(ColumnRow & { project_id: number }) | null> {
  return conn.maybeOne(sql.type(columnRow.extend({ project_id: z.number() }))`
    select ${columnColumns}, b.project_id from kanban_columns c join kanban_boards b on b.id = c.board_id where c.id = ${id}`);
}

/** Adds a column at the end of a board (lock the board first). */
export async function appendColumn(tx: CommonQueryMethods, boardId: number, name: string, wipLimit: number | null): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into kanban_columns (board_id, name, wip_limit, position)
    values (${boardId}, ${name}, ${wipLimit}, (select count(*)::int from kanban_columns where board_id = ${boardId}))
    returning id`);
}

/** Changes a column's name and WIP limit (a limit below the current count is allowed). */
export async function updateColumnFields(tx: CommonQueryMethods, id: number, fields: { name?: string; wipLimit?: number | null }): Promise<void> {
  const sets = [sql.fragment`updated_at = now()`];
  if (fields.name !== undefined) sets.push(sql.fragment`name = ${fields.name}`);
  if (fields.wipLimit !== undefined) sets.push(sql.fragment`wip_limit = ${fields.wipLimit}`);
  await tx.query(sql.type(ignoredRow)`update kanban_columns set ${sql.join(sets, sql.fragment`, `)} where id = ${id}`);
}

/** Moves a column to index `position` of its board (clamped), shifting the others (lock the board first). */
export async function repositionColumn(tx: CommonQueryMethods, column: ColumnRow, position: number): Promise<void> {
  const count = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from kanban_columns where board_id = ${column.board_id}`);
  const target = Math.max(0, Math.min(position, count - 1));
  if (target === column.position) return;
  if (target < column.position) {
    await tx.query(sql.type(ignoredRow)`
      update kanban_columns set position = position + 1
      where board_id = ${column.board_id} and position >= ${target} and position < ${column.position}`);
  } else {
    await tx.query(sql.type(ignoredRow)`
      update kanban_columns set position = position - 1
      where board_id = ${column.board_id} and position > ${column.position} and position <= ${target}`);
  }
  await tx.query(sql.type(ignoredRow)`update kanban_columns set position = ${target}, updated_at = now() where id = ${column.id}`);
}

/**
 * Deletes a column (lock the board first). Its cards move to the end of `targetId` in their
 * order, which must be another column of the board with room for them.
 * @throws 409 when the column has cards and no target, or the target's WIP limit (or MAX_CARDS_PER_COLUMN) would be passed
 */
export async function deleteColumn(tx: CommonQueryMethods, column: ColumnRow, target: ColumnRow | null): Promise<void> {
  if (column.card_count > 0) {
    if (!target) throw conflict("The column still has cards; name a column to move them to (target_column_id).", "column_not_empty");
    if (target.card_count + column.card_count > MAX_CARDS_PER_COLUMN) {
      throw conflict(`A column holds at most ${MAX_CARDS_PER_COLUMN} cards: "${target.name}" has room for ${Math.max(0, MAX_CARDS_PER_COLUMN - target.card_count)} more, not ${column.card_count}.`, "column_full");
    }
    if (target.wip_limit !== null && target.card_count + column.card_count > target.wip_limit) {
      throw conflict(`The column "${target.name}" has room for ${Math.max(0, target.wip_limit - target.card_count)} more cards, not ${column.card_count}.`, "wip_limit_reached");
    }
    await tx.query(sql.type(ignoredRow)`
      update kanban_cards set column_id = ${target.id}, position = ${target.card_count} + position, updated_at = now()
      where column_id = ${column.id}`);
  }
  await tx.query(sql.type(ignoredRow)`delete from kanban_columns where id = ${column.id}`);
  await tx.query(sql.type(ignoredRow)`
    update kanban_columns set position = position - 1 where board_id = ${column.board_id} and position > ${column.position}`);
}
