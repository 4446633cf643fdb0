/**
 * The policies themselves, cell by cell, on real rows: every role of the site and of a team
 * against every predicate, the project guard's statuses, messages and row locks, and the
 * form-set visibility condition run in SQL. The route matrices (authorizationMatrix,
 * schemas.matrix, deployments.matrix) show the routes use these; this file shows each rule
 * says what its comment says, so that loosening one fails here (the mutation run's check).
 */
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { authorize } from "../../api/policies/authorize.ts";
import { projectForDeploy, projectForDeploymentConfig, projectForDeploymentRead } from "../../api/policies/deployment.ts";
import { canEditFormSet, formSetReadable } from "../../api/policies/formSet.ts";
import { canDeleteGenerator, canRunGenerator, canUpdateGenerator, canViewGenerator } from "../../api/policies/generator.ts";
import { canCancelJob, canViewJob } from "../../api/policies/job.ts";
import { canDeleteProject, canEditProjectContent, canManageProject, canSeeJoinCode, canViewProject } from "../../api/policies/project.ts";
import { projectForRead, projectForWrite, type ProjectAction, type WriteOptions } from "../../api/policies/projectGuard.ts";
import { hasRole, isSiteAdmin } from "../../api/policies/roles.ts";
import { canAssignTeamRole, canDeleteTeam, canManageTeam, canViewTeam } from "../../api/policies/team.ts";
import { findProject } from "../../shared/db/projects.ts";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { findTeam, TEAM_ROLE } from "../../shared/db/teams.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { AppError } from "../../shared/errors.ts";
import type { GeneratorRow } from "../../shared/generators/store.ts";
import type { JobRow } from "../../shared/jobs/records.ts";
import { freshDatabase } from "../support/db.ts";
import { buildProject, buildTeam, buildUser } from "../support/factories.ts";

const ignored = z.object({});
type Cast = Record<"owner" | "teamAdmin" | "member" | "viewer" | "stranger" | "siteAdmin" | "superAdmin" | "developer", UserRow>;

async function buildCast(pool: DatabasePool): Promise<Cast> {
  const [owner, teamAdmin, member, viewer, stranger, siteAdmin, superAdmin, developer] = await Promise.all([
    buildUser(pool),
    buildUser(pool),
    buildUser(pool),
    buildUser(pool),
    buildUser(pool),
    buildUser(pool, { roles: ["admin"] }),
    buildUser(pool, { roles: ["super_admin"] }),
    buildUser(pool, { roles: ["developer"] }),
  ]);
  return { owner, teamAdmin, member, viewer, stranger, siteAdmin, superAdmin, developer };
}

/** The error `promise` rejects with, as {status, code, message}; null when it resolves. */
async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
    return null;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
}

t.test("policies", async (t) => {
  const db = await freshDatabase(t);
  const { pool } = db;
  const cast = await buildCast(pool);
  const names = Object.keys(cast) as (keyof Cast)[];
  const project = await buildProject(pool, cast.owner.id);
  const team = await buildTeam(pool, cast.owner.id, { [cast.teamAdmin.id]: TEAM_ROLE.admin, [cast.member.id]: TEAM_ROLE.member, [cast.viewer.id]: TEAM_ROLE.viewer }, [project]);

  /** Whom `predicate` allows, over the whole cast. */
  const allowed = async (predicate: (user: UserRow) => boolean | Promise<boolean>) => {
    const out: string[] = [];
    for (const name of names) if (await predicate(cast[name])) out.push(name);
    return out;
  };

  t.test("roles: super_admin holds every site role but super_admin is held only by itself", async (t) => {
    t.same(await allowed((u) => hasRole(u, "admin")), ["siteAdmin", "superAdmin"]);
    t.same(await allowed((u) => hasRole(u, "super_admin")), ["superAdmin"]);
    t.same(await allowed((u) => hasRole(u, "developer")), ["superAdmin", "developer"]);
    t.same(await allowed((u) => hasRole(u, "user")), names, "everyone is a user");
    t.same(await allowed(isSiteAdmin), ["siteAdmin", "superAdmin"]);
  });

  t.test("projects: read, manage, content, delete and the join code, on the rows the routes load", async (t) => {
    const row = async (u: UserRow) => (await findProject(pool, project, u.id))!;
    t.same(await allowed(async (u) => canViewProject(u, await row(u))), ["owner", "teamAdmin", "member", "viewer", "siteAdmin", "superAdmin"]);
    t.same(await allowed(async (u) => canManageProject(u, await row(u))), ["owner", "teamAdmin", "superAdmin"]);
    t.same(await allowed(async (u) => canSeeJoinCode(u, await row(u))), ["owner", "teamAdmin", "superAdmin"]);
    t.same(await allowed(async (u) => canEditProjectContent(u, await row(u))), ["owner", "teamAdmin", "member", "superAdmin"]);
    t.same(await allowed(async (u) => canDeleteProject(u, await row(u))), ["owner"]);
  });

  t.test("teams: view, manage, delete, and which roles each may hand out", async (t) => {
    const row = async (u: UserRow) => (await findTeam(pool, team, u.id))!;
    t.same(await allowed(async (u) => canViewTeam(u, await row(u))), ["owner", "teamAdmin", "member", "viewer", "siteAdmin", "superAdmin"]);
    t.same(await allowed(async (u) => canManageTeam(u, await row(u))), ["owner", "teamAdmin", "superAdmin"]);
    t.same(await allowed(async (u) => canDeleteTeam(u, await row(u))), ["owner", "superAdmin"]);
    t.same(await allowed(async (u) => canAssignTeamRole(u, await row(u), "owner")), [], "ownership is never assigned");
    t.same(await allowed(async (u) => canAssignTeamRole(u, await row(u), "admin")), ["owner", "superAdmin"]);
    t.same(await allowed(async (u) => canAssignTeamRole(u, await row(u), "member")), ["owner", "teamAdmin", "superAdmin"]);
    t.same(await allowed(async (u) => canAssignTeamRole(u, await row(u), "viewer")), ["owner", "teamAdmin", "superAdmin"]);
  });

  t.test("jobs: their owner and site admins", async (t) => {
    const job = { user_id: cast.member.id, kind: "templates__execute" } as JobRow;
    t.same(await allowed((u) => canViewJob(u, job)), ["member", "siteAdmin", "superAdmin"]);
    t.same(await allowed((u) => canCancelJob(u, job)), ["member", "siteAdmin", "superAdmin"]);
    const notice = { user_id: cast.member.id, kind: "emails__send" } as JobRow;
    t.same(await allowed((u) => canCancelJob(u, notice)), ["siteAdmin", "superAdmin"], "a notice: not its owner's to cancel");
    const unknown = { user_id: cast.member.id, kind: "gone__away" } as JobRow;
    t.same(await allowed((u) => canCancelJob(u, unknown)), ["siteAdmin", "superAdmin"], "a kind no one declared: not its owner's either");
    const orphan = { user_id: null, kind: "templates__execute" } as JobRow;
    t.same(await allowed((u) => canViewJob(u, orphan)), ["siteAdmin", "superAdmin"], "a job of no one: site admins only");
    t.same(await allowed((u) => canCancelJob(u, orphan)), ["siteAdmin", "superAdmin"]);
  });

  t.test("generators: viewers, admins among them, the owning admin, and runs by status", async (t) => {
    type G = Pick<GeneratorRow, "user_id" | "team_role" | "status">;
    // The generator's owner is `developer`; the team's roles as the generator row reports them per caller.
    const teamRole: Partial<Record<keyof Cast, G["team_role"]>> = { developer: "owner", teamAdmin: "admin", member: "member", viewer: "viewer", siteAdmin: "viewer" };
    const gen = (u: UserRow, status: G["status"]): G => ({ user_id: cast.developer.id, status, team_role: teamRole[names.find((n) => cast[n] === u)!] ?? null });
    t.same(await allowed((u) => canViewGenerator(u, gen(u, "Draft"))), ["teamAdmin", "member", "viewer", "siteAdmin", "superAdmin", "developer"]);
    t.same(await allowed((u) => canUpdateGenerator(u, gen(u, "Draft"))), ["siteAdmin", "superAdmin"], "a viewer holding admin, or a super admin");
    t.same(await allowed((u) => canDeleteGenerator(u, gen(u, "Draft"))), ["superAdmin"], "the owner is no admin here");
    t.same(await allowed((u) => canRunGenerator(u, gen(u, "Draft"))), ["developer"], "a draft runs for its owner only");
    t.same(await allowed((u) => canRunGenerator(u, gen(u, "Published"))), ["teamAdmin", "member", "viewer", "siteAdmin", "superAdmin", "developer"]);
    t.same(await allowed((u) => canRunGenerator(u, gen(u, "Archived"))), [], "an archived one for nobody");
    const adminOwned: G = { user_id: cast.siteAdmin.id, status: "Draft", team_role: null };
    t.ok(canDeleteGenerator(cast.siteAdmin, adminOwned), "its owner holding admin deletes it");
    t.ok(canUpdateGenerator(cast.siteAdmin, adminOwned), "and updates it");
    t.notOk(canDeleteGenerator(cast.owner, { ...adminOwned, user_id: cast.owner.id }), "an owner without the admin role does not");
  });

  t.test("form sets: the creator edits; visibility decides who reads, in SQL", async (t) => {
    // The creator (member) shares the world's team with the others. Teams whose owner holds no
    // membership row: `head` owns one the creator is in, and the creator owns one `follower` is in.
    const head = await buildUser(pool);
    const follower = await buildUser(pool);
    const loner = await buildUser(pool);
    const bareTeam = async (ownerId: number, memberId: number) => {
      const id = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`insert into teams (owner_id, name) values (${ownerId}, 'bare') returning id`);
      await pool.query(sql.type(ignored)`insert into team_members (team_id, user_id, role_id) values (${id}, ${memberId}, ${TEAM_ROLE.viewer})`);
    };
    await bareTeam(head.id, cast.member.id);
    await bareTeam(cast.member.id, follower.id);
    const insert = (visibility: string) =>
      pool.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into form_sets (creator_user_id, name, visibility, default_background_color, default_window_color, default_text_color, default_button_color, default_button_text_color)
        values (${cast.member.id}, ${visibility}, ${visibility}, '#fff', '#fff', '#000', '#00f', '#fff') returning id`);
    const sets = { private: await insert("private"), team: await insert("team"), public: await insert("public") };
    const readable = async (u: UserRow) => {
      const ids = await pool.anyFirst(sql.type(z.object({ id: z.number() }))`select fs.id from form_sets fs where ${formSetReadable(u)} order by fs.id`);
      return (Object.keys(sets) as (keyof typeof sets)[]).filter((k) => ids.includes(sets[k]));
    };
    t.same(await readable(cast.member), ["private", "team", "public"], "the creator reads all three");
    t.same(await readable(cast.viewer), ["team", "public"], "a member of the creator's team");
    t.same(await readable(cast.owner), ["team", "public"], "the owner of the creator's team");
    t.same(await readable(head), ["team", "public"], "the owner of a team the creator is in");
    t.same(await readable(follower), ["team", "public"], "a member of a team the creator owns");
    t.same(await readable(loner), ["public"], "someone sharing no team");
    t.same(await readable(cast.siteAdmin), ["private", "team", "public"], "site admins read every set");
    t.same(await allowed((u) => canEditFormSet(u, { creator_user_id: cast.member.id })), ["member"]);
  });

  t.test("authorize throws 403 with the message given, or the default", async (t) => {
    t.doesNotThrow(() => authorize(true, "never"));
    t.throws(() => authorize(false, "Not yours."), { status: 403, code: "forbidden", message: "Not yours." });
    t.throws(() => authorize(false), { status: 403, code: "forbidden", message: "This action is unauthorized." });
  });

  t.test("project guard: 404 unseen, 403 not allowed (with the action's message), then 423, 402, 409 and their exemptions", async (t) => {
    const fresh = await buildProject(pool, cast.owner.id);
    await buildTeam(pool, cast.owner.id, { [cast.teamAdmin.id]: TEAM_ROLE.admin, [cast.member.id]: TEAM_ROLE.member, [cast.viewer.id]: TEAM_ROLE.viewer }, [fresh]);
    const write = (u: UserRow, action: ProjectAction, options?: WriteOptions) => refusal(pool.transaction((tx) => projectForWrite(tx, fresh, u, action, options)));
    t.equal((await projectForRead(pool, fresh, cast.viewer)).id, fresh);
    t.same(await refusal(projectForRead(pool, fresh, cast.stranger)), { status: 404, code: "not_found", message: "Project not found." });
    t.same(await refusal(projectForRead(pool, 999_999_999, cast.owner)), { status: 404, code: "not_found", message: "Project not found." });
    t.same(await write(cast.stranger, "content"), { status: 404, code: "not_found", message: "Project not found." });
    t.same(await write(cast.owner, "manage"), null);
    t.same(await write(cast.member, "content"), null);
    t.same(await write(cast.viewer, "content"), { status: 403, code: "forbidden", message: "You may not change this project." });
    t.same(await write(cast.member, "manage"), { status: 403, code: "forbidden", message: "You may not change this project." });
    t.same(await write(cast.teamAdmin, "delete"), { status: 403, code: "forbidden", message: "Only the project's owner may delete it." });
    t.same(await write(cast.owner, "delete"), null);

    const setState = (fragment: ReturnType<typeof sql.fragment>) => pool.query(sql.type(ignored)`${fragment}`);
    await setState(sql.fragment`update projects set is_locked = true where id = ${fresh}`);
    t.match(await write(cast.owner, "manage"), { status: 423, code: "project_locked" });
    t.same(await write(cast.owner, "manage", { allowLocked: true }), null, "unlocking is exempt");
    await setState(sql.fragment`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${fresh}`);
    t.match(await write(cast.owner, "manage"), { status: 423 }, "locked is answered before expired");
    t.match(await write(cast.owner, "manage", { allowLocked: true }), { status: 402, code: "subscription_expired" });
    await setState(sql.fragment`update projects set is_locked = false, archived_at = now() where id = ${fresh}`);
    t.match(await write(cast.owner, "manage"), { status: 402 }, "expired is answered before archived");
    t.match(await write(cast.owner, "manage", { allowExpired: true }), { status: 409, code: "project_archived" });
    t.same(await write(cast.owner, "delete", { allowExpired: true, allowArchived: true }), null, "deleting is exempt from both");
    t.match(await write(cast.viewer, "content"), { status: 403 }, "the right is checked before the state");
  });

  t.test("project guard locks: FOR SHARE for content (content writes run together), FOR UPDATE for the project itself", async (t) => {
    const fresh = await buildProject(pool, cast.owner.id);
    // A plain client beside the pool: the pool refuses queries from outside a running transaction.
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    t.teardown(() => other.end());
    /** Which locks another connection can still take on the row while `action`'s guard holds its lock. */
    const compatible = (action: ProjectAction) =>
      pool.transaction(async (tx) => {
        await projectForWrite(tx, fresh, cast.owner, action);
        const attempt = (mode: string) =>
          other.query(`select 1 from projects where id = $1 for ${mode} nowait`, [fresh]).then(
            () => true,
            (error: { code?: string }) => {
              if (error.code !== "55P03") throw error;
              return false;
            },
          );
        return { share: await attempt("share"), update: await attempt("update") };
      });
    t.same(await compatible("content"), { share: true, update: false });
    t.same(await compatible("manage"), { share: false, update: false });
    t.same(await compatible("delete"), { share: false, update: false });
  });

  t.test("deployment area: read whoever sees, deploy with content rights, configure with manage rights", async (t) => {
    const read = async (u: UserRow) => (await refusal(projectForDeploymentRead(pool, project, u)))?.status ?? 200;
    const deploy = async (u: UserRow) => (await refusal(pool.transaction((tx) => projectForDeploy(tx, project, u))))?.status ?? 200;
    const configure = async (u: UserRow) => (await refusal(pool.transaction((tx) => projectForDeploymentConfig(tx, project, u))))?.status ?? 200;
    const statuses = async (f: (u: UserRow) => Promise<number>) => Object.fromEntries(await Promise.all(names.map(async (n) => [n, await f(cast[n])])));
    const seen = { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 404, siteAdmin: 200, superAdmin: 200, developer: 404 };
    t.same(await statuses(read), seen);
    t.same(await statuses(deploy), { ...seen, viewer: 403, siteAdmin: 403 });
    t.same(await statuses(configure), { ...seen, member: 403, viewer: 403, siteAdmin: 403 });
  });
});
