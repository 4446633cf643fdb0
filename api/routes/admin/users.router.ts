/**
 * GET /admin/users: every account, for site administrators; searchable by name, username
 * or e-mail and filterable by role. GET|PUT|DELETE /admin/users/{id}: one account, its
 * roles, name, verified flag and `disabled_at` (rules in shared/admin/userAdministration.ts).
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { roles, userColumns, userRow } from "../../../shared/db/users.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment, paginationQuery } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { adminUserResource, presentAdminUser } from "../../presenters/user.ts";
import { administerUser, removeUser } from "../../../shared/admin/userAdministration.ts";
import { findUserById } from "../../../shared/db/users.ts";
import { notFound } from "../../../shared/errors.ts";
import { defineRoute } from "../route.ts";
import { updateAdminUserBody, userIdParams } from "./users.schema.ts";

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

const adminUserBody = z.object({ user: adminUserResource });

const showUser = defineRoute({
  method: "get",
  path: "/admin/users/{id}",
  summary: "One account with its roles and state (site administrators only)",
  tags: ["Admin"],
  auth: "bearer",
  params: userIdParams,
  responses: { 200: { description: "The account", schema: adminUserBody }, 403: { description: "Not an administrator" }, 404: { description: "No such account" } },
  handler: async (ctx, { params }) => {
    authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may read accounts.");
    const user = await findUserById(ctx.deps.pool, params.id);
    if (!user) throw notFound("User");
    ctx.body = { user: presentAdminUser(user) };
  },
});

const updateUser = defineRoute({
  method: "put",
  path: "/admin/users/{id}",
  summary: "Change an account's roles, name, verified flag or disabled state (audited)",
  description: "Only a super administrator grants or removes admin/super_admin or changes an administrator's account; the last super administrator cannot be demoted or disabled. A disabled account's tokens stop working at once.",
  tags: ["Admin"],
  auth: "bearer",
  params: userIdParams,
  body: updateAdminUserBody,
  responses: {
    200: { description: "The updated account", schema: z.object({ message: z.string(), user: adminUserResource }) },
    403: { description: "Not an administrator, or the change needs a super administrator" },
    404: { description: "No such account" },
    409: { description: "The last super administrator would be lost (`last_super_admin`)" },
  },
  handler: async (ctx, { params, body }) => {
    const actor = currentUser(ctx);
    authorize(isSiteAdmin(actor), "Only administrators may change accounts.");
    const { disabled_at: disabledAt, ...rest } = body;
    const user = await ctx.deps.pool.transaction((tx) =>
      administerUser(tx, actor, params.id, { ...rest, ...(disabledAt !== undefined ? { disabled_at: disabledAt === null ? null : new Date(disabledAt) } : {}) }),
    );
    ctx.body = { message: "User updated.", user: presentAdminUser(user) };
  },
});

const deleteUser = defineRoute({
  method: "delete",
  path: "/admin/users/{id}",
  summary: "Delete an account (audited)",
  tags: ["Admin"],
  auth: "bearer",
  params: userIdParams,
  responses: {
    200: { description: "Deleted", schema: z.object({ message: z.string() }) },
    403: { description: "Not an administrator, one's own account, or an administrator's account without super_admin" },
    404: { description: "No such account" },
    409: { description: "The last super administrator (`last_super_admin`), or an account that records kept for others refer to (`account_has_records`: invoices)" },
  },
  handler: async (ctx, { params }) => {
    const actor = currentUser(ctx);
    authorize(isSiteAdmin(actor), "Only administrators may delete accounts.");
    await ctx.deps.pool.transaction((tx) => removeUser(tx, actor, params.id));
    ctx.body = { message: "User deleted." };
  },
});

export const adminUserRoutes = [listUsers, showUser, updateUser, deleteUser];
