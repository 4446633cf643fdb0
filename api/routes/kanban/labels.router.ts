/**
 * Labels of a board (DESIGN §11): listed by whoever sees the board, created, changed and
 * deleted by whoever may edit the project's content.
 */
import { z } from "zod";
import { invalid, notFound } from "../../../shared/errors.ts";
import { countLabels, deleteLabel, findLabel, insertLabel, listLabels, MAX_LABELS_PER_BOARD, updateLabel } from "../../../shared/kanban/labels.ts";
import { currentUser } from "../../context.ts";
import { labelResource, presentLabel } from "../../presenters/kanban.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { createLabelBody, updateLabelBody } from "./kanban.schema.ts";
import { boardForRead, boardForWrite, hiddenAs } from "./load.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Kanban"];
const labelEnvelope = z.object({ message: z.string(), label: labelResource });

const list = defineRoute({
  method: "get",
  path: "/kanban-boards/{id}/labels",
  summary: "The labels of a board",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Labels", schema: z.object({ data: z.array(labelResource) }) } },
  handler: async (ctx, { params }) => {
    const { board } = await boardForRead(ctx.deps.pool, params.id, currentUser(ctx));
    ctx.body = { data: (await listLabels(ctx.deps.pool, board.id)).map(presentLabel) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/kanban-boards/{id}/labels",
  summary: "Add a label to a board",
  tags,
  auth: "bearer",
  params: idParams,
  body: createLabelBody,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: labelEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const label = await ctx.deps.pool.transaction(async (tx) => {
      const { board } = await boardForWrite(tx, params.id, user);
      if ((await countLabels(tx, board.id)) >= MAX_LABELS_PER_BOARD) throw invalid({ name: [`A board holds at most ${MAX_LABELS_PER_BOARD} labels.`] });
      return insertLabel(tx, board.id, body.name, body.color);
    });
    ctx.status = 201;
    ctx.body = { message: "Label created.", label: presentLabel(label) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/kanban-labels/{id}",
  summary: "Rename or recolor a label",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateLabelBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: labelEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const label = await ctx.deps.pool.transaction(async (tx) => {
      const found = await findLabel(tx, params.id);
      if (!found) throw notFound("Label");
      await hiddenAs("Label", () => boardForWrite(tx, found.board_id, user));
      return updateLabel(tx, found.id, body);
    });
    ctx.body = { message: "Label updated.", label: presentLabel(label) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/kanban-labels/{id}",
  summary: "Delete a label (cards lose it)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const found = await findLabel(tx, params.id);
      if (!found) throw notFound("Label");
      await hiddenAs("Label", () => boardForWrite(tx, found.board_id, user));
      await deleteLabel(tx, found.id);
    });
    ctx.body = { message: "Label deleted." };
  },
});

export const kanbanLabelRoutes = [list, create, update, remove];
