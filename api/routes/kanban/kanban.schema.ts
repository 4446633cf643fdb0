/**
 * Request schemas of the kanban routes (spec "Kanban", DESIGN §14): board and column names,
 * WIP limits, the card write form (with `column_id`), moves `{column_id, order}`, labels.
 */
import { z } from "zod";
import { calendarDate } from "../../../shared/calendarDate.ts";
import { kanbanRoles } from "../../../shared/kanban/details.ts";
import { priorities } from "../../../shared/kanban/cards.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";
import { MAX_CARDS_PER_COLUMN, MAX_COLUMNS_PER_BOARD } from "../../../shared/kanban/store.ts";

export const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const bodyId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const name = z.string().trim().min(1).max(255);
const order = z.number().int().min(0).max(1_000_000);

export const projectCardParams = projectParams.extend({ cardId: id });

export const createBoardBody = z.object({
  name,
  columns: z.array(name).max(MAX_COLUMNS_PER_BOARD).default(["To Do", "In Progress", "Done"]),
});

export const updateBoardBody = z.object({ name });

const wipLimit = z.number().int().min(1).max(MAX_CARDS_PER_COLUMN).nullable();

export const createColumnBody = z.object({ board_id: bodyId, name, wip_limit: wipLimit.optional() });

export const updateColumnBody = z
  .object({ name: name.optional(), wip_limit: wipLimit.optional(), position: order.optional() })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const deleteColumnQuery = z.object({ target_column_id: idNumber().optional() });

const date = calendarDate("The due date must be an ISO date (YYYY-MM-DD).");
const idList = z.array(bodyId).max(100).refine((list) => new Set(list).size === list.length, { error: "Each id may be given once." });

/**
 * Estimated hours as stored (numeric(8, 2)): a third decimal would be rounded away, so the
 * card's activity and `CardUpdated` would report a value it never holds (and a change on
 * every resend of the same value).
 */
const hours = z
  .number()
  .min(0)
  .max(100_000)
  .refine((v) => /^\d+(\.\d{1,2})?$/.test(String(v)), { error: "The estimated hours may have at most two decimals." });

const cardFields = {
  title: name,
  description: z.string().max(20_000).nullable().optional(),
  priority: z.enum(priorities).optional(),
  due_date: date.nullable().optional(),
  estimated_hours: hours.nullable().optional(),
  assignees: idList.optional(),
  labels: idList.optional(),
};

export const createCardBody = z.object({ ...cardFields, column_id: bodyId, order: order.optional() });

export const updateCardBody = z
  .object({ ...cardFields, title: name.optional() })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const moveBody = z.object({ column_id: bodyId, order });

/** The second move route also takes `status` (the target column id, as the spec's client sends it). */
export const moveCardBody = z
  .object({ column_id: bodyId.optional(), status: z.union([bodyId, z.string().regex(/^[1-9][0-9]{0,15}$/).transform(Number)]).optional(), order: order.default(0) })
  .superRefine((v, ctx) => {
    if (v.column_id === undefined && v.status === undefined) ctx.addIssue({ code: "custom", path: ["column_id"], message: "The column id field is required." });
    if (v.column_id !== undefined && v.status !== undefined && v.column_id !== v.status) {
      ctx.addIssue({ code: "custom", path: ["status"], message: "The status must be the target column's id." });
    }
  })
  .transform((v) => ({ column_id: (v.column_id ?? v.status)!, order: v.order }));

export const assigneeBody = z.object({ user_id: bodyId, kanban_role: z.enum(kanbanRoles).nullable().optional() });

const color = z.string().regex(/^#[0-9A-Fa-f]{6}$/, { error: "The color must be a hex color like #3B82F6." });
export const createLabelBody = z.object({ name: z.string().trim().min(1).max(64), color });
export const updateLabelBody = z
  .object({ name: z.string().trim().min(1).max(64).optional(), color: color.optional() })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

/** Text fields of the comment form (JSON or multipart); files come as `attachments[i]` (or `attachments`). */
export const commentBody = z.object({ body: z.string().trim().min(1).max(20_000) }).loose();
export const updateCommentBody = z.object({ body: z.string().trim().min(1).max(20_000) });
