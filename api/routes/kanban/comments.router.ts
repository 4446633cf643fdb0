/**
 * Comments of kanban cards: multipart (`body`, `attachments[i]`) or JSON (`body`), replies
 * (`POST /comments/{id}/replies`), edits by their author, deletion by their author or
 * whoever manages the project. Attachments are a patron feature (spec, Authentication 15):
 * without patron membership a comment with files answers 403 `patron_required` and nothing
 * is stored. Files go through storage with a sanitised name and the type read from their bytes.
 */
import { z } from "zod";
import { discardStored, isUploadedFile, storeUploads, type UploadedFile } from "../../../shared/attachments/upload.ts";
import { insertAttachment, listCommentAttachments } from "../../../shared/attachments/store.ts";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { AppError, forbidden, invalid, notFound } from "../../../shared/errors.ts";
import { recordActivity } from "../../../shared/kanban/activities.ts";
import { deleteComment, insertComment, updateComment } from "../../../shared/kanban/comments.ts";
import { findComment } from "../../../shared/kanban/details.ts";
import { isPatron } from "../../../shared/patrons/membership.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { canManageProject } from "../../policies/project.ts";
import { linkSigner } from "../../presenters/attachment.ts";
import { commentResource, presentComment } from "../../presenters/kanban.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { commentBody, updateCommentBody } from "./kanban.schema.ts";
import { cardForWrite, hiddenAs } from "./load.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Kanban"];
/** Files one comment may carry. */
export const MAX_ATTACHMENTS = 10;
const commentEnvelope = z.object({ message: z.string(), comment: commentResource });
const ATTACHMENT_FIELD = /^attachments(\[\d{0,3}\])?$/;

/** Position of an attachments field: `attachments[i]` by its index, a bare `attachments` first. */
const fieldIndex = (key: string) => Number(/\[(\d+)\]$/.exec(key)?.[1] ?? -1);

/**
 * The files of a comment form in the order of their field indexes (the body parser lists
 * files as their writes finish, which is not the order they were sent in); 422 for a
 * non-file value in an attachments field.
 */
function attachmentsOf(body: Record<string, unknown>): UploadedFile[] {
  const files: UploadedFile[] = [];
  const fields = Object.entries(body).sort(([a], [b]) => fieldIndex(a) - fieldIndex(b));
  for (const [key, value] of fields) {
    if (!ATTACHMENT_FIELD.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (!isUploadedFile(item)) throw invalid({ [key]: ["Each attachment must be a file (send the comment as multipart/form-data)."] });
      files.push(item);
    }
  }
  if (files.length > MAX_ATTACHMENTS) throw invalid({ attachments: [`A comment carries at most ${MAX_ATTACHMENTS} attachments.`] });
  return files;
}

/** Writes a comment (or reply) with its files; returns the presented comment. */
async function postComment(ctx: AppContext, cardId: number, parentId: number | null, body: Record<string, unknown> & { body: string }) {
  const user = currentUser(ctx);
  const { pool, storage, config } = ctx.deps;
  const files = attachmentsOf(body);
  // Refuse before anything is stored: who may not comment here, or may not attach, stores nothing.
  await pool.transaction((tx) => cardForWrite(tx, cardId, user));
  if (files.length && !(await isPatron(pool, user.id))) {
    throw new AppError(403, "patron_required", "Attachments on comments are a patron feature.");
  }
  const stored = files.length ? await storeUploads(storage, "kanban", files) : [];
  try {
    const id = await pool.transaction(async (tx) => {
      const { card } = await cardForWrite(tx, cardId, user);
      // Read again under the board's lock, which deleting a comment takes too: a parent deleted
      // since the route found it is 404, not a reply turned into a top comment.
      if (parentId !== null && (await findComment(tx, parentId))?.card_id !== card.id) throw notFound("Comment");
      const id = await insertComment(tx, card.id, user.id, body.body, parentId);
      for (const file of stored) await insertAttachment(tx, { owner: { commentId: id }, userId: user.id, ...file });
      await recordActivity(tx, card.id, user.id, "commented", parentId === null ? "commented" : "replied to a comment");
      return id;
    });
    return loadComment(pool, id, config);
  } catch (error) {
    await discardStored(storage, stored);
    throw error;
  }
}

async function loadComment(conn: CommonQueryMethods, id: number, config: Parameters<typeof linkSigner>[0]) {
  const comment = await findComment(conn, id);
  if (!comment) throw notFound("Comment");
  return presentComment(comment, [...(await listCommentAttachments(conn, [id]))], [], linkSigner(config));
}

const create = defineRoute({
  method: "post",
  path: "/kanban-cards/{id}/comments",
  summary: "Comment on a card (multipart: `body`, `attachments[i]`; or JSON `{body}`)",
  description: `Attachments (at most ${MAX_ATTACHMENTS}, UPLOAD_LIMIT_BYTES together) need patron membership: 403 \`patron_required\` otherwise, nothing stored.`,
  tags,
  auth: "bearer",
  params: idParams,
  body: commentBody,
  bodyKind: "json-or-multipart",
  responses: { ...projectStateResponses, 201: { description: "Created", schema: commentEnvelope } },
  handler: async (ctx, { params, body }) => {
    const comment = await postComment(ctx, params.id, null, body);
    ctx.status = 201;
    ctx.body = { message: "Comment added.", comment };
  },
});

/** A comment the caller may act on, with its card's board locked. @throws 404, 403 */
async function commentForWrite(tx: CommonQueryMethods, id: number, user: UserRow) {
  const comment = await findComment(tx, id);
  if (!comment) throw notFound("Comment");
  const { project } = await hiddenAs("Comment", () => cardForWrite(tx, comment.card_id, user));
  return { comment, project };
}

const reply = defineRoute({
  method: "post",
  path: "/comments/{id}/replies",
  summary: "Reply to a comment (same form as a comment)",
  tags,
  auth: "bearer",
  params: idParams,
  body: commentBody,
  bodyKind: "json-or-multipart",
  responses: { ...projectStateResponses, 201: { description: "Created", schema: commentEnvelope } },
  handler: async (ctx, { params, body }) => {
    const parent = await findComment(ctx.deps.pool, params.id);
    if (!parent) throw notFound("Comment");
    const comment = await hiddenAs("Comment", () => postComment(ctx, parent.card_id, parent.id, body));
    ctx.status = 201;
    ctx.body = { message: "Reply added.", comment };
  },
});

const update = defineRoute({
  method: "put",
  path: "/comments/{id}",
  summary: "Edit one's own comment",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateCommentBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: commentEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    await pool.transaction(async (tx) => {
      const { comment } = await commentForWrite(tx, params.id, user);
      if (comment.user_id !== user.id) throw forbidden("Only its author may edit a comment.");
      await updateComment(tx, comment.id, body.body);
    });
    ctx.body = { message: "Comment updated.", comment: await loadComment(pool, params.id, config) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/comments/{id}",
  summary: "Delete a comment with its replies and attachments (its author, or whoever manages the project)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { comment, project } = await commentForWrite(tx, params.id, user);
      if (comment.user_id !== user.id && !canManageProject(user, project)) throw forbidden("Only its author or a manager of the project may delete a comment.");
      await deleteComment(tx, comment.id);
    });
    ctx.body = { message: "Comment deleted." };
  },
});

export const kanbanCommentRoutes = [create, reply, update, remove];
