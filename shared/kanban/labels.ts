/**
 * Labels of a kanban board (DESIGN §11: `/kanban-boards/{id}/labels`, `/kanban-labels/{id}`):
 * a name and a hex color; a card carries labels of its own board only.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { labelRow, type LabelRow } from "./details.ts";

/** A board holds at most this many labels. */
export const MAX_LABELS_PER_BOARD = 200;

/** The labels of a board. */
export async function listLabels(conn: CommonQueryMethods, boardId: number): Promise<readonly LabelRow[]> {
  return conn.any(sql.type(labelRow)`select id, board_id, name, color from kanban_labels where board_id = ${boardId} order by id`);
}

/** A label with the project of its board, or null. */
export async function findLabel(conn: CommonQueryMethods, id: number): Promise<(LabelRow & { project_id: number }) | null> {
  return conn.maybeOne(sql.type(labelRow.extend({ project_id: z.number() }))`
    select l.id, l.board_id, l.name, l.color, b.project_id from kanban_labels l join kanban_boards b on b.id = l.board_id where l.id = ${id}`);
}

/** Creates a label. */
export async function insertLabel(tx: CommonQueryMethods, boardId: number, name: string, color: string): Promise<LabelRow> {
  return tx.one(sql.type(labelRow)`
    insert into kanban_labels (board_id, name, color) values (${boardId}, ${name}, ${color}) returning id, board_id, name, color`);
}

/** Changes a label's name or color. */
export async function updateLabel(tx: CommonQueryMethods, id: number, fields: { name?: string | undefined; color?: string | undefined }): Promise<LabelRow> {
  return tx.one(sql.type(labelRow)`
    update kanban_labels set name = coalesce(${fields.name ?? null}, name), color = coalesce(${fields.color ?? null}, color)
    where id = ${id} returning id, board_id, name, color`);
}

/** Deletes a label (cards lose it). */
export async function deleteLabel(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from kanban_labels where id = ${id}`);
}

/** How many labels a board holds. */
export async function countLabels(conn: CommonQueryMethods, boardId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from kanban_labels where board_id = ${boardId}`);
}
