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

const assignmentRow = z.object({ id: z.number(), card_id: z.number(), user_id: z.number(), kanban_role: z.enum(kanbanRoles).nullable() });
const personRow = z.object({ id: z.number(), name: z.string(), username: z.string(), kanban_initials: z.string().nullable(), kanban_color: z.string().nullable() });
const cardLabelRow = z.object({ card_id: z.number(), label_id: z.number() });
const countRow = z.object({ card_id: z.number(), n: z.number() });

/**
 * Assignees, labels and comment counts of every card of some boards, in five set-based
 * queries of narrow rows (assignments, the people assigned, card labels, those labels, comment
 * counts) joined here, however many cards: aggregating JSON per card in SQL (a subquery per
 * card and list) cost more than the rest of a 2,000-card board read together, and each person
 * and label crosses the wire once, not once per card.
 */
export async function loadCardSummaries(conn: CommonQueryMethods, boardIds: readonly number[]): Promise<{ details: CardDetails; counts: Map<number, number> }> {
  const details: CardDetails = { assignees: new Map(), labels: new Map(), comments: new Map(), attachments: new Map(), activities: new Map() };
  const counts = new Map<number, number>();
  if (boardIds.length === 0) return { details, counts };
  const boards = sql.array([...boardIds], "int8");
  const [assignments, people, cardLabels, labels, commentCounts] = await Promise.all([
    conn.any(sql.type(assignmentRow)`
      select a.id, a.card_id, a.user_id, a.kanban_role from kanban_card_assignees a join kanban_cards k on k.id = a.card_id
      where k.board_id = any(${boards}) order by a.card_id, a.id`),
    conn.any(sql.type(personRow)`
      select u.id, u.name, u.username, u.kanban_initials, u.kanban_color from users u
      where u.id in (select a.user_id from kanban_card_assignees a join kanban_cards k on k.id = a.card_id where k.board_id = any(${boards}))`),
    conn.any(sql.type(cardLabelRow)`
      select cl.card_id, cl.label_id from kanban_card_labels cl join kanban_cards k on k.id = cl.card_id
      where k.board_id = any(${boards}) order by cl.card_id, cl.label_id`),
    conn.any(sql.type(labelRow)`
      select l.id, l.board_id, l.name, l.color from kanban_labels l
      where l.id in (select cl.label_id from kanban_card_labels cl join kanban_cards k on k.id = cl.card_id where k.board_id = any(${boards}))`),
    conn.any(sql.type(countRow)`
      select c.card_id, count(*)::int as n from kanban_comments c join kanban_cards k on k.id = c.card_id
      where k.board_id = any(${boards}) group by c.card_id`),
  ]);
  const personById = new Map(people.map((p) => [p.id, p]));
  for (const a of assignments) {
    const person = personById.get(a.user_id);
    if (!person) continue; // assigned and deleted between the two reads
    const row: AssigneeRow = {
      id: a.id,
      card_id: a.card_id,
      user_id: a.user_id,
      name: person.name,
      username: person.username,
      kanban_initials: person.kanban_initials,
      kanban_color: person.kanban_color,
      kanban_role: a.kanban_role,
    };
    const list = details.assignees.get(a.card_id);
    if (list) list.push(row);
    else details.assignees.set(a.card_id, [row]);
  }
  const labelById = new Map(labels.map((l) => [l.id, l]));
  for (const cl of cardLabels) {
    const label = labelById.get(cl.label_id);
    if (!label) continue;
    const list = details.labels.get(cl.card_id);
    if (list) list.push(label);
    else details.labels.set(cl.card_id, [label]);
  }
  for (const row of commentCounts) counts.set(row.card_id, row.n);
  return { details, counts };
}
