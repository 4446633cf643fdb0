/**
 * Kanban resources (spec "Kanban"): boards with columns in position order, cards with their
 * assignees (Assignee fields, with initials and color from the user's kanban profile or
 * derived from the name and id), labels, comments with replies and attachments, and
 * activities. A board read carries cards without comments and activities (their counts and
 * the full card are one `GET /kanban-cards/{id}` away).
 */
import { z } from "zod";
import type { AttachmentRow } from "../../shared/attachments/store.ts";
import type { CardRow } from "../../shared/kanban/cards.ts";
import type { ActivityRow, AssigneeRow, CardDetails, CommentRow, KanbanRole, LabelRow } from "../../shared/kanban/details.ts";
import type { BoardRow, ColumnRow } from "../../shared/kanban/store.ts";
import { attachmentResource, presentAttachment, type LinkSigner } from "./attachment.ts";

const ROLE_STYLE: Record<KanbanRole, { short: string; color: string }> = {
  SRM: { short: "SRM", color: "#2563EB" },
  SDM: { short: "SDM", color: "#16A34A" },
  "Flow Manager": { short: "FM", color: "#D97706" },
};
const PALETTE = ["#EF4444", "#F97316", "#EAB308", "#22C55E", "#14B8A6", "#3B82F6", "#8B5CF6", "#EC4899"];

/** Initials from a name: the first letters of its first two words (one word: its first two letters). */
export function initialsOf(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length >= 2 ? [words[0]![0]!, words[1]![0]!] : [...(words[0] ?? "?")].slice(0, 2);
  return letters.join("").toUpperCase();
}

const personResource = z.object({ id: z.number(), name: z.string(), username: z.string() }).nullable();
const personOf = (row: { user_id: number | null; user_name: string | null; user_username: string | null }) =>
  row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? "", username: row.user_username ?? "" };

export const assigneeResource = z.object({
  id: z.number(),
  user_id: z.number(),
  assignment_id: z.number(),
  username: z.string(),
  name: z.string(),
  avatar_url: z.string().nullable(),
  initials: z.string(),
  color: z.string(),
  kanban_role: z.string().nullable(),
  kanban_role_short: z.string().nullable(),
  kanban_role_color: z.string().nullable(),
});

/**
 * An Assignee: `id` (and `user_id`) is the person, as the card write form's `assignees`
 * takes them; `assignment_id` names the assignment for `DELETE /assignees/{id}`.
 */
export function presentAssignee(row: AssigneeRow) {
  const role = row.kanban_role === null ? null : ROLE_STYLE[row.kanban_role];
  return {
    id: row.user_id,
    user_id: row.user_id,
    assignment_id: row.id,
    username: row.username,
    name: row.name,
    avatar_url: null,
    initials: row.kanban_initials ?? initialsOf(row.name),
    color: row.kanban_color ?? PALETTE[row.user_id % PALETTE.length]!,
    kanban_role: row.kanban_role,
    kanban_role_short: role?.short ?? null,
    kanban_role_color: role?.color ?? null,
  };
}

export const labelResource = z.object({ id: z.number(), board_id: z.number(), name: z.string(), color: z.string() });
export const presentLabel = (row: LabelRow) => ({ id: row.id, board_id: row.board_id, name: row.name, color: row.color });

const commentFields = {
  id: z.number(),
  card_id: z.number(),
  parent_id: z.number().nullable(),
  author: personResource,
  body: z.string(),
  attachments: z.array(attachmentResource),
  created_at: z.string(),
  updated_at: z.string(),
};
export const replyResource = z.object(commentFields);
export const commentResource = z.object({ ...commentFields, replies: z.array(replyResource) });

function presentOneComment(row: CommentRow, attachments: AttachmentRow[], sign: LinkSigner) {
  return {
    id: row.id,
    card_id: row.card_id,
    parent_id: row.parent_id,
    author: personOf(row),
    body: row.body,
    attachments: attachments.map((a) => presentAttachment(a, sign)),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Top comments in order, each with its replies in order. */
export function presentComments(rows: CommentRow[], attachments: Map<number, AttachmentRow[]>, sign: LinkSigner) {
  const replies = new Map<number, CommentRow[]>();
  for (const row of rows) if (row.parent_id !== null) replies.set(row.parent_id, [...(replies.get(row.parent_id) ?? []), row]);
  return rows
    .filter((row) => row.parent_id === null)
    .map((row) => ({
      ...presentOneComment(row, attachments.get(row.id) ?? [], sign),
      replies: (replies.get(row.id) ?? []).map((reply) => presentOneComment(reply, attachments.get(reply.id) ?? [], sign)),
    }));
}

/** One comment (a reply has no replies of its own). */
export function presentComment(row: CommentRow, attachments: AttachmentRow[], replies: CommentRow[], sign: LinkSigner, replyAttachments = new Map<number, AttachmentRow[]>()) {
  return { ...presentOneComment(row, attachments, sign), replies: replies.map((r) => presentOneComment(r, replyAttachments.get(r.id) ?? [], sign)) };
}

export const activityResource = z.object({
  id: z.number(),
  card_id: z.number(),
  type: z.enum(["created", "updated", "commented", "moved", "assigned"]),
  actor: personResource,
  description: z.string(),
  changes: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
const presentActivity = (row: ActivityRow) => ({
  id: row.id,
  card_id: row.card_id,
  type: row.type,
  actor: personOf(row),
  description: row.description,
  changes: row.changes,
  created_at: row.created_at.toISOString(),
});

const cardFields = {
  id: z.number(),
  board_id: z.number(),
  column_id: z.number(),
  position: z.number(),
  title: z.string(),
  description: z.string().nullable(),
  priority: z.enum(["low", "medium", "high"]),
  status: z.string(),
  due_date: z.string().nullable(),
  estimated_hours: z.number().nullable(),
  assignees: z.array(assigneeResource),
  labels: z.array(labelResource),
  comments_count: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
};
/** A card as the board read lists it. */
export const cardSummaryResource = z.object(cardFields);
/** The full Card resource. */
export const cardResource = z.object({ ...cardFields, comments: z.array(commentResource), activities: z.array(activityResource) });

/** A card in a board read: `status` is its column's id (spec: the client sets it to the target column id). */
export function presentCardSummary(row: CardRow, details: CardDetails, commentsCount: number) {
  return {
    id: row.id,
    board_id: row.board_id,
    column_id: row.column_id,
    position: row.position,
    title: row.title,
    description: row.description,
    priority: row.priority,
    status: String(row.column_id),
    due_date: row.due_date,
    estimated_hours: row.estimated_hours,
    assignees: (details.assignees.get(row.id) ?? []).map(presentAssignee),
    labels: (details.labels.get(row.id) ?? []).map(presentLabel),
    comments_count: commentsCount,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The full card. */
export function presentCard(row: CardRow, details: CardDetails, sign: LinkSigner) {
  const comments = details.comments.get(row.id) ?? [];
  return {
    ...presentCardSummary(row, details, comments.length),
    comments: presentComments(comments, details.attachments, sign),
    activities: (details.activities.get(row.id) ?? []).map(presentActivity),
  };
}

export const columnResource = z.object({
  id: z.number(),
  board_id: z.number(),
  name: z.string(),
  wip_limit: z.number().nullable(),
  position: z.number(),
  card_count: z.number(),
  cards: z.array(cardSummaryResource),
});
export type ColumnResource = z.infer<typeof columnResource>;

/** A column with its cards in order. */
export const presentColumn = (row: ColumnRow, cards: z.infer<typeof cardSummaryResource>[]) => ({
  id: row.id,
  board_id: row.board_id,
  name: row.name,
  wip_limit: row.wip_limit,
  position: row.position,
  card_count: row.card_count,
  cards,
});

export const boardResource = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  columns: z.array(columnResource),
  created_at: z.string(),
  updated_at: z.string(),
});

export const presentBoard = (row: BoardRow, columns: ColumnResource[]) => ({
  id: row.id,
  project_id: row.project_id,
  name: row.name,
  columns,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});
