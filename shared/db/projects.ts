/**
 * Queries on projects. Every read carries the caller's access to the project
 * (`owner`, `admin` or `member`/`viewer` through a team, or none) and the state of its
 * latest subscription, so policies and guards decide from one row.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "./pool.ts";

export const projectAccessLevels = ["owner", "admin", "member", "viewer"] as const;
export type ProjectAccess = (typeof projectAccessLevels)[number] | null;

export const projectRow = z.object({
  id: z.number(),
  owner_id: z.number(),
  owner_name: z.string(),
  owner_username: z.string(),
  name: z.string(),
  description: z.string(),
  is_public: z.boolean(),
  is_locked: z.boolean(),
  allow_join_requests: z.boolean(),
  join_code: z.string().nullable(),
  form_designer_snap_to_grid: z.boolean(),
  form_designer_grid_size: z.number(),
  archived_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  access: z.enum(projectAccessLevels).nullable(),
  subscription_id: z.number().nullable(),
  subscription_expires_at: z.date().nullable(),
});
export type ProjectRow = z.infer<typeof projectRow>;

/** The caller's access to project `p`: owner, or the best team role among teams attached to it. */
export const accessFragment = (userId: number) => sql.fragment`
  case when p.owner_id = ${userId} then 'owner' else (
    select case min(tm.role_id) when 1 then 'admin' when 2 then 'admin' when 3 then 'member' when 4 then 'viewer' end
    from team_projects tp join team_members tm on tm.team_id = tp.team_id
    where tp.project_id = p.id and tm.user_id = ${userId}
  ) end`;

/** Columns of `projectRow` for a query over `projects p join users o on o.id = p.owner_id`. */
export const projectColumns = (userId: number) => sql.fragment`
  p.id, p.owner_id, o.name as owner_name, o.username as owner_username, p.name, p.description, p.is_public,
  p.is_locked, p.allow_join_requests, p.join_code, p.form_designer_snap_to_grid, p.form_designer_grid_size,
  p.archived_at, p.created_at, p.updated_at, ${accessFragment(userId)} as access,
  s.id as subscription_id, s.expires_at as subscription_expires_at`;

/** The latest subscription of `p`, as `s`. */
export const latestSubscriptionJoin = sql.fragment`
  left join lateral (
    -- A period the renewal job expired (expired_at) counts as run out from then on.
    select id, case when expired_at is null then expires_at else least(expires_at, expired_at, now()) end as expires_at
    from subscriptions where project_id = p.id order by started_at desc, id desc limit 1
  ) s on true`;

/** A live (not deleted) project with the caller's access; `lock` adds FOR UPDATE / FOR SHARE on the project row. */
export async function findProject(
  conn: CommonQueryMethods,
  id: number,
  userId: number,
  lock?: "update" | "share",
): Promise<ProjectRow | null> {
  const locking = lock === "update" ? sql.fragment`for update of p` : lock === "share" ? sql.fragment`for share of p` : sql.fragment``;
  return conn.maybeOne(sql.type(projectRow)`
    select ${projectColumns(userId)}
    from projects p join users o on o.id = p.owner_id ${latestSubscriptionJoin}
    where p.id = ${id} and p.deleted_at is null
    ${locking}`);
}

/** Whether the latest subscription has run out (the spec's soft lock). */
export const subscriptionExpired = (project: Pick<ProjectRow, "subscription_expires_at">) =>
  project.subscription_expires_at !== null && project.subscription_expires_at.getTime() <= Date.now();

/**
 * Counts shown with a project. Each area registers the count of what it keeps in a
 * project (schemas, templates, …); areas not built yet count zero.
 */
const counters = new Map<string, ReturnType<typeof sql.fragment>>([["teams_count", sql.fragment`(select count(*)::int from team_projects where project_id = p.id)`]]);

export const countNames = ["teams_count", "schemas_count", "templates_count", "forms_count", "reports_count", "kanban_boards_count"] as const;
export type ProjectCounts = Record<(typeof countNames)[number], number>;

/** Registers the SQL count (over project `p`) of one of `countNames`. */
export function registerProjectCounter(name: (typeof countNames)[number], fragment: ReturnType<typeof sql.fragment>): void {
  counters.set(name, fragment);
}

const countsRow = z.object({
  id: z.number(),
  teams_count: z.number(),
  schemas_count: z.number(),
  templates_count: z.number(),
  forms_count: z.number(),
  reports_count: z.number(),
  kanban_boards_count: z.number(),
});

/** The counts of several projects, by id. */
export async function projectCounts(conn: CommonQueryMethods, ids: readonly number[]): Promise<Map<number, ProjectCounts>> {
  if (ids.length === 0) return new Map();
  const columns = countNames.map((name) => sql.fragment`${counters.get(name) ?? sql.fragment`0`} as ${sql.identifier([name])}`);
  const rows = await conn.any(sql.type(countsRow)`
    select p.id, ${sql.join(columns, sql.fragment`, `)} from projects p where p.id = any(${sql.array([...ids], "int8")})`);
  return new Map(rows.map(({ id, ...counts }) => [id, counts]));
}
