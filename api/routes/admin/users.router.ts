/**
 * GET /admin/users: every account, for site administrators; searchable by name, username
 * or e-mail and filterable by role.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { roles, userColumns, userRow } from "../../../shared/db/users.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment, paginationQuery } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { adminUserResource, presentAdminUser } from "../../presenters/user.ts";
import { defineRoute } from "../route.ts";

const listUsers = defineRoute({
  method: "get",
  path: "/admin/users",
  summary: "All users (site administrators only)",
  tags: ["Admin"],
  auth: "bearer",
  query: paginationQuery.extend({ q: z.string().trim().max(255).optional(), role: z.enum(roles).optional() }),
  responses: { 200: { description: "A page of users", schema: paginatedSchema(adminUserResource) }, 403: { description: "Not an administrator" } },
  handler: async (ctx, { query }) => {
    authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may list users.");
    const filters = [sql.fragment`true`];
    if (query.q) {
      const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      filters.push(sql.fragment`(u.name ilike ${like} or u.username ilike ${like} or u.email ilike ${like})`);
    }
    if (query.role) filters.push(sql.fragment`exists (select 1 from user_roles r where r.user_id = u.id and r.role = ${query.role})`);
    const where = sql.join(filters, sql.fragment` and `);
    const [rows, total] = await Promise.all([
      ctx.deps.pool.any(sql.type(userRow)`select ${userColumns} from users u where ${where} order by u.id ${pageFragment(query)}`),
      ctx.deps.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from users u where ${where}`),
    ]);
    ctx.body = paginated(rows.map(presentAdminUser), total, query, new URL(ctx.href));
  },
});

export const adminUserRoutes = [listUsers];
