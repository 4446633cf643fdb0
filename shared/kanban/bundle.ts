/**
 * The `kanban` section of project bundles: each board with its labels and its columns in
 * order, each column with its WIP limit and its cards in order (the card write form's fields,
 * the names of its labels and their `label_indexes` in the board's `labels`). Assignees,
 * comments, attachments and activities stay with the project they happened in: the people of
 * another project may not be the same.
 *
 * A board may hold two labels of one name (say a red and a blue "bug"), so a card's labels
 * travel by index: by name alone, every card came back with the same one of them. A bundle
 * without `label_indexes` (written before they existed) names labels, each the board's first
 * label of that name.
 */
import { z } from "zod";
import { calendarDate } from "../calendarDate.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { registerBundleSection, type ImportContext } from "../projects/bundle.ts";
import { listCards, priorities } from "./cards.ts";
import { listLabels, MAX_LABELS_PER_BOARD } from "./labels.ts";
import { insertBoard, listBoards, listColumns, MAX_BOARDS_PER_PROJECT, MAX_CARDS_PER_COLUMN, MAX_COLUMNS_PER_BOARD } from "./store.ts";

const name = z.string().trim().min(1).max(255);
const bundledCard = z.object({
  title: name,
  description: z.string().max(20_000).nullable().default(null),
  priority: z.enum(priorities).default("medium"),
  due_date: calendarDate().nullable().default(null),
  estimated_hours: z.number().min(0).max(100_000).nullable().default(null),
  labels: z.array(z.string().min(1).max(64)).max(MAX_LABELS_PER_BOARD).default([]),
  /** Positions of the card's labels in its board's `labels`, in the order of `labels`. */
  label_indexes: z.array(z.number().int().min(0).max(MAX_LABELS_PER_BOARD - 1)).max(MAX_LABELS_PER_BOARD).optional(),
});
const bundledBoard = z.object({
  name,
  labels: z.array(z.object({ name: z.string().trim().min(1).max(64), color: z.string().regex(/^#[0-9A-Fa-f]{6}$/) })).max(MAX_LABELS_PER_BOARD).default([]),
  columns: z
    .array(
      z.object({
        name,
        wip_limit: z.number().int().min(1).max(MAX_CARDS_PER_COLUMN).nullable().default(null),
        cards: z.array(bundledCard).max(MAX_CARDS_PER_COLUMN).default([]),
      }),
    )
    .max(MAX_COLUMNS_PER_BOARD),
}).superRefine((board, ctx) => {
  for (const [c, column] of board.columns.entries()) {
    for (const [k, card] of column.cards.entries()) {
      if (card.label_indexes === undefined) continue;
      const named = card.label_indexes.map((i) => board.labels[i]?.name);
      if (named.length !== card.labels.length || named.some((name, i) => name !== card.labels[i]?.trim())) {
        ctx.addIssue({
          code: "custom",
          path: ["columns", c, "cards", k, "label_indexes"],
          message: "Each label index must point at a label of the board with the name given in labels, in the same order.",
        });
      }
    }
  }
});
const section = z.array(bundledBoard).max(MAX_BOARDS_PER_PROJECT);
type Section = z.infer<typeof section>;

const cardLabelRow = z.object({ card_id: z.number(), label_id: z.number() });

async function exportKanban(conn: CommonQueryMethods, projectId: number): Promise<Section> {
  const boards = await listBoards(conn, projectId);
  const ids = boards.map((b) => b.id);
  const [columns, cards] = await Promise.all([listColumns(conn, ids), listCards(conn, ids)]);
  const cardLabels = ids.length
    ? await conn.any(sql.type(cardLabelRow)`
        select cl.card_id, cl.label_id from kanban_card_labels cl join kanban_labels l on l.id = cl.label_id
        where l.board_id = any(${sql.array(ids, "int8")}) order by cl.card_id, l.id`)
    : [];
  const labelIdsOf = new Map<number, number[]>();
  for (const row of cardLabels) labelIdsOf.set(row.card_id, [...(labelIdsOf.get(row.card_id) ?? []), row.label_id]);
  const out: Section = [];
  for (const board of boards) {
    const labels = await listLabels(conn, board.id);
    const indexOf = new Map(labels.map((l, index) => [l.id, index]));
    const labelsOf = (cardId: number) => (labelIdsOf.get(cardId) ?? []).map((id) => indexOf.get(id)!);
    out.push({
      name: board.name,
      labels: labels.map((l) => ({ name: l.name, color: l.color })),
      columns: columns
        .filter((c) => c.board_id === board.id)
        .map((c) => ({
          name: c.name,
          wip_limit: c.wip_limit,
          cards: cards
            .filter((k) => k.column_id === c.id)
            .map((k) => ({
              title: k.title,
              description: k.description,
              priority: k.priority,
              due_date: k.due_date,
              estimated_hours: k.estimated_hours,
              labels: labelsOf(k.id).map((index) => labels[index]!.name),
              label_indexes: labelsOf(k.id),
            })),
        })),
    });
  }
  return out;
}

async function importKanban(tx: CommonQueryMethods, data: Section, ctx: ImportContext): Promise<void> {
  for (const item of data) {
    const board = await insertBoard(tx, ctx.projectId, ctx.userId, item.name, item.columns.map((c) => c.name));
    const labelIds: number[] = [];
    const byName = new Map<string, number>();
    for (const label of item.labels) {
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into kanban_labels (board_id, name, color) values (${board.id}, ${label.name}, ${label.color}) returning id`);
      labelIds.push(id);
      if (!byName.has(label.name)) byName.set(label.name, id);
    }
    const columns = await listColumns(tx, [board.id]);
    for (const [index, column] of item.columns.entries()) {
      const columnId = columns[index]!.id;
      // An imported column keeps its limit even when it holds more cards (as a lowered limit may).
      if (column.wip_limit !== null) await tx.query(sql.type(ignoredRow)`update kanban_columns set wip_limit = ${column.wip_limit} where id = ${columnId}`);
      for (const [position, card] of column.cards.entries()) {
        const cardId = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
          insert into kanban_cards (board_id, column_id, position, title, description, priority, due_date, estimated_hours, created_by)
          values (${board.id}, ${columnId}, ${position}, ${card.title}, ${card.description}, ${card.priority}, ${card.due_date}::date, ${card.estimated_hours}, ${ctx.userId})
          returning id`);
        const chosen = card.label_indexes ? card.label_indexes.map((i) => labelIds[i]) : card.labels.map((n) => byName.get(n.trim()));
        const labels = chosen.filter((id): id is number => id !== undefined);
        if (labels.length) {
          await tx.query(sql.type(ignoredRow)`
            insert into kanban_card_labels (card_id, label_id) select ${cardId}, unnest(${sql.array(labels, "int8")}) on conflict do nothing`);
        }
      }
    }
  }
}

registerBundleSection<Section>({
  name: "kanban",
  schema: section,
  export: exportKanban,
  import: importKanban,
  count: (data) => data.length,
});
