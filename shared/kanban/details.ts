/**
 * What hangs off kanban cards, loaded for many cards at once (one query per kind, however
 * many cards): assignees with their users, labels, comments with authors and attachments,
 * activities with actors. A board read costs the same handful of queries for 10 cards or
 * 2,000.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { listCommentAttachments, type AttachmentRow } from "../attachments/store.ts";

export const kanbanRoles = ["SRM", "SDM", "Flow Manager"] as const;
export type KanbanRole = (typeof kanbanRoles)[number];

export const assigneeRow = z.object({
  id: z.number(),
  card_id: z.number(),
  user_id: z.number(),
  name: z.string(),
  username: z.string(),
  kanban_initials: z.string().nullable(),
  kanban_color: z.string().nullable(),
  kanban_role: z.enum(kanbanRoles).nullable(),
});
export type AssigneeRow = z.infer<typeof assigneeRow>;

export const labelRow = z.object({ id: z.number(), board_id: z.number(), name: z.string(), color: z.string() });
export type LabelRow = z.infer<typeof labelRow>;

const author = { user_id: z.number().nullable(), user_name: z.string().nullable(), user_username: z.string().nullable() };

export const commentRow = z.object({
  id: z.number(),
  card_id: z.number(),
  parent_id: z.number().nullable(),
  body: z.string(),
  created_at: z.date(),
  updated_at: z.date(),
  ...author,
});
export type CommentRow = z.infer<typeof commentRow>;

export const activityRow = z.object({
  id: z.number(),
  card_id: z.number(),
  type: z.enum(["created", "updated", "commented", "moved", "assigned"]),
  description: z.string(),
  changes: z.record(z.string(), z.unknown()),
  created_at: z.date(),
  ...author,
});
export type ActivityRow = z.infer<typeof activityRow>;

/** Everything hanging off a set of cards, grouped by card id. */
export interface CardDetails {
  assignees: Map<number, AssigneeRow[]>;
  labels: Map<number, LabelRow[]>;
  comments: Map<number, CommentRow[]>;
  attachments: Map<number, AttachmentRow[]>;
  activities: Map<number, ActivityRow[]>;
}

function group<T>(rows: readonly T[], key: (row: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  }
  return out;
}

/** Loads the details of `cardIds` (comments and activities only when asked). */
export async function loadCardDetails(conn: CommonQueryMethods, cardIds: readonly number[], full = true): Promise<CardDetails> {
  const ids = sql.array([...cardIds], "int8");
  const none = cardIds.length === 0;
  const [assignees, labels, comments, activities] = await Promise.all([
    none ? [] : conn.any(sql.type(assigneeRow)`
      select a.id, a.card_id, u.id as user_id, u.name, u.username, u.kanban_initials, u.kanban_color, a.kanban_role
      from kanban_card_assignees a join users u on u.id = a.user_id where a.card_id = any(${ids}) order by a.card_id, a.id`),
    none ? [] : conn.any(sql.type(labelRow.extend({ card_id: z.number() }))`
      select l.id, l.board_id, l.name, l.color, cl.card_id
      from kanban_card_labels cl join kanban_labels l on l.id = cl.label_id where cl.card_id = any(${ids}) order by cl.card_id, l.id`),
    none || !full ? [] : conn.any(sql.type(commentRow)`
      select c.id, c.card_id, c.parent_id, c.body, c.created_at, c.updated_at, u.id as user_id, u.name as user_name, u.username as user_username
      from kanban_comments c left join users u on u.id = c.user_id where c.card_id = any(${ids}) order by c.card_id, c.id`),
    none || !full ? [] : conn.any(sql.type(activityRow)`
      select a.id, a.card_id, a.type, a.description, a.changes, a.created_at, u.id as user_id, u.name as user_name, u.username as user_username
      from kanban_activities a left join users u on u.id = a.user_id where a.card_id = any(${ids}) order by a.card_id, a.id`),
  ]);
  const attachments = await listCommentAttachments(conn, comments.map((c) => c.id));
  return {
    assignees: group(assignees, (r) => r.card_id),
    labels: group(labels, (r) => r.card_id),
    comments: group(comments, (r) => r.card_id),
    attachments: group(attachments, (r) => r.comment_id!),
    activities: group(activities, (r) => r.card_id),
  };
}

/** One comment with its author, or null. */
export async function findComment(conn: CommonQueryMethods, id: number): Promise<(CommentRow & { project_id: number; board_id: number }) | null> {
  return conn.maybeOne(sql.type(commentRow.extend({ project_id: z.number(), board_id: z.number() }))`
    select c.id, c.card_id, c.parent_id, c.body, c.created_at, c.updated_at, u.id as user_id, u.name as user_name, u.username as user_username,
      b.project_id, b.id as board_id
    from kanban_comments c left join users u on u.id = c.user_id
    join kanban_cards k on k.id = c.card_id join kanban_boards b on b.id = k.board_id
    where c.id = ${id}`);
}

const summaryRow = z.object({
  card_id: z.number(),
  assignees: z.array(assigneeRow.omit({ card_id: true })),
  labels: z.array(labelRow),
  comments_count: z.number(),
});

/**
 * Assignees, labels and comment counts of every card of some boards, one row per card with
 * the lists aggregated in SQL: a board read validates and transfers one row per card, not
 * one per assignee and label.
 */
export async function loadCardSummaries(conn: CommonQueryMethods, boardIds: readonly number[]): Promise<{ details: CardDetails; counts: Map<number, number> }> {
  const rows = boardIds.length === 0 ? [] : await conn.any(sql.type(summaryRow)`
    select k.id as card_id,
      coalesce((select json_agg(json_build_object('id', a.id, 'user_id', u.id, 'name', u.name, 'username', u.username,
          'kanban_initials', u.kanban_initials, 'kanban_color', u.kanban_color, 'kanban_role', a.kanban_role) order by a.id)
        from kanban_card_assignees a join users u on u.id = a.user_id where a.card_id = k.id), '[]') as assignees,
      coalesce((select json_agg(json_build_object('id', l.id, 'board_id', l.board_id, 'name', l.name, 'color', l.color) order by l.id)
        from kanban_card_labels cl join kanban_labels l on l.id = cl.label_id where cl.card_id = k.id), '[]') as labels,
      (select count(*)::int from kanban_comments c where c.card_id = k.id) as comments_count
    from kanban_cards k where k.board_id = any(${sql.array([...boardIds], "int8")})`);
  const details: CardDetails = { assignees: new Map(), labels: new Map(), comments: new Map(), attachments: new Map(), activities: new Map() };
  const counts = new Map<number, number>();
  for (const row of rows) {
    if (row.assignees.length) details.assignees.set(row.card_id, row.assignees.map((a) => ({ ...a, card_id: row.card_id })));
    if (row.labels.length) details.labels.set(row.card_id, row.labels);
    counts.set(row.card_id, row.comments_count);
  }
  return { details, counts };
}
