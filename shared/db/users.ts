/**
 * Queries on users and their roles.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "./pool.ts";

export const roles = ["user", "developer", "admin", "super_admin"] as const;
export type Role = (typeof roles)[number];

export const userRow = z.object({
  id: z.number(),
  name: z.string(),
  username: z.string(),
  email: z.string(),
  language: z.string(),
  theme: z.string(),
  email_verified_at: z.date().nullable(),
  is_seller: z.boolean(),
  kanban_initials: z.string().nullable(),
  kanban_color: z.string().nullable(),
  tokens_revoked_at: z.date().nullable(),
  created_at: z.date(),
  roles: z.array(z.enum(roles)),
});
export type UserRow = z.infer<typeof userRow>;

/** Column list of `userRow` for a query over `users u`. */
export const userColumns = sql.fragment`u.id, u.name, u.username, u.email, u.language, u.theme, u.email_verified_at,
  u.is_seller, u.kanban_initials, u.kanban_color, u.tokens_revoked_at, u.created_at,
  coalesce((select array_agg(r.role order by r.role) from user_roles r where r.user_id = u.id), '{}') as roles`;

export async function findUserById(conn: CommonQueryMethods, id: number): Promise<UserRow | null> {
  return conn.maybeOne(sql.type(userRow)`select ${userColumns} from users u where u.id = ${id}`);
}

export interface InsertUserInput {
  name: string;
  username: string;
  email: string;
  passwordHash: string | null;
  language?: string;
  roles?: Role[];
  emailVerified?: boolean;
}

/** Inserts a user with its roles (at least `user`). */
export async function insertUser(conn: CommonQueryMethods, input: InsertUserInput): Promise<UserRow> {
  const id = await conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into users (name, username, email, password_hash, language, email_verified_at)
    values (${input.name}, ${input.username}, ${input.email}, ${input.passwordHash}, ${input.language ?? "en"},
      ${input.emailVerified ? sql.fragment`now()` : null})
    returning id`);
  const granted = [...new Set<Role>(["user", ...(input.roles ?? [])])];
  await conn.query(sql.type(z.object({}))`
    insert into user_roles (user_id, role) select ${id}, unnest(${sql.array(granted, "text")}::text[])`);
  const user = await findUserById(conn, id);
  if (!user) throw new Error("inserted user vanished");
  return user;
}
