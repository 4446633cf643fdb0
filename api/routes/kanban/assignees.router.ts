/**
 * Assignees of a card (`POST /kanban-cards/{id}/assignees` `{user_id, kanban_role}`,
 * `DELETE /assignees/{id}`): only people of the project (422 otherwise); an assignment
 * records an `assigned` activity and both publish `CardUpdated` with the assignees' change.
 * Assigning someone already assigned changes their kanban role (`kanban_role` null clears
 * it, an omitted one keeps it); a changed role records an `assigned` activity and publishes
 * `CardUpdated`, both with `kanban_roles` (`{old: {<user id>: role}, new: {<user id>: role}}`).
 */
import { notifyAssigned } from "../../../shared/kanban/assignmentNotice.ts";
import { z } from "zod";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { recordActivity } from "../../../shared/kanban/activities.ts";
import { assignUser, cardLinks, type Assigned, findAssignment, projectPeople, unassign } from "../../../shared/kanban/cards.ts";
import { loadCardDetails } from "../../../shared/kanban/details.ts";
import { cardUpdated } from "../../../shared/kanban/events.ts";
import { currentUser } from "../../context.ts";
import { assigneeResource, presentAssignee } from "../../presenters/kanban.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { assigneeBody } from "./kanban.schema.ts";
import { cardForWrite, hiddenAs } from "./load.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Kanban"];

/**
 * A changed kanban role of someone already assigned: an `assigned` activity and `CardUpdated`,
 * both with `kanban_roles` mapping the person's user id to the role before and after.
 */
async function recordRoleChange(tx: CommonQueryMethods, card: { id: number; board_id: number }, actorId: number, name: string, assigned: Assigned): Promise<void> {
  const key = String(assigned.user_id);
  const changes = { kanban_roles: { old: { [key]: assigned.old_role }, new: { [key]: assigned.role } } };
  const description = assigned.role === null ? `removed the kanban role of ${name}` : `made ${name} ${assigned.role}`;
  await recordActivity(tx, card.id, actorId, "assigned", description, changes);
  await cardUpdated(tx, card.board_id, card.id, changes);
}

const add = defineRoute({
  method: "post",
  path: "/kanban-cards/{id}/assignees",
  summary: "Assign a member of the project to a card, with an optional kanban role (SRM, SDM, Flow Manager)",
  tags,
  auth: "bearer",
  params: idParams,
  body: assigneeBody,
  responses: { ...projectStateResponses, 201: { description: "Assigned", schema: z.object({ message: z.string(), assignee: assigneeResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const assignee = await ctx.deps.pool.transaction(async (tx) => {
      const { card, project } = await cardForWrite(tx, params.id, user);
      if (!(await projectPeople(tx, project.id, [body.user_id])).has(body.user_id)) throw invalid({ user_id: ["The user is not a member of the project."] });
      const before = await cardLinks(tx, card.id);
      const assigned = await assignUser(tx, card.id, body.user_id, body.kanban_role);
      if (assigned.created) {
        const after = [...before.assignees, body.user_id].sort((a, b) => a - b);
        const changes = { assignees: { old: before.assignees, new: after } };
        await recordActivity(tx, card.id, user.id, "assigned", "assigned 1 person", changes);
        await cardUpdated(tx, card.board_id, card.id, changes);
        await notifyAssigned(tx, { assigner: user, card }, [body.user_id]);
      }
      const details = await loadCardDetails(tx, [card.id], false);
      const assignee = details.assignees.get(card.id)!.find((a) => a.id === assigned.id)!;
      if (!assigned.created && assigned.old_role !== assigned.role) await recordRoleChange(tx, card, user.id, assignee.name, assigned);
      return assignee;
    });
    ctx.status = 201;
    ctx.body = { message: "Assigned.", assignee: presentAssignee(assignee) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/assignees/{id}",
  summary: "Remove an assignment (an assignee's `assignment_id`)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Removed", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const found = await findAssignment(tx, params.id);
      if (!found) throw notFound("Assignee");
      const { card } = await hiddenAs("Assignee", () => cardForWrite(tx, found.card_id, user));
      const before = await cardLinks(tx, card.id);
      if (!before.assignees.includes(found.user_id)) throw notFound("Assignee");
      await unassign(tx, found.id);
      await cardUpdated(tx, card.board_id, card.id, { assignees: { old: before.assignees, new: before.assignees.filter((u) => u !== found.user_id) } });
    });
    ctx.body = { message: "Assignee removed." };
  },
});

export const kanbanAssigneeRoutes = [add, remove];
