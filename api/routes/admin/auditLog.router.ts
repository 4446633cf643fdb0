/**
 * GET /admin/audit-log: the administrative changes, newest first, filterable by actor,
 * subject and action (site administrators only).
 */
import { listAuditEntries } from "../../../shared/admin/auditLog.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, paginationQuery } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { auditEntryResource, presentAuditEntry } from "../../presenters/auditEntry.ts";
import { defineRoute } from "../route.ts";
import { auditLogQuery } from "./users.schema.ts";

const listAuditLog = defineRoute({
  method: "get",
  path: "/admin/audit-log",
  summary: "Administrative changes: who, what, before → after, when (site administrators only)",
  tags: ["Admin"],
  auth: "bearer",
  query: paginationQuery.extend(auditLogQuery.shape),
  responses: { 200: { description: "A page of audit entries", schema: paginatedSchema(auditEntryResource) }, 403: { description: "Not an administrator" } },
  handler: async (ctx, { query }) => {
    authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may read the audit log.");
    const filters = { actorId: query.actor_id, subjectType: query.subject_type, subjectId: query.subject_id, action: query.action };
    const { rows, total } = await listAuditEntries(ctx.deps.pool, filters, query.per_page, (query.page - 1) * query.per_page);
    ctx.body = paginated(rows.map(presentAuditEntry), total, query, new URL(ctx.href));
  },
});

export const auditLogRoutes = [listAuditLog];
