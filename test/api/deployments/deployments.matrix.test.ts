/**
 * Every deployment and webhook route × {owner, team admin, member, viewer, stranger, site
 * admin}: members and site admins read; content writers (owner, team admin, member) deploy;
 * managers (owner, team admin) configure; strangers see nothing. The worker is off, so
 * queued runs stay queued.
 */
import t from "tap";
import { z } from "zod";
import { seal } from "../../../shared/crypto.ts";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration } from "../../support/deploymentFactories.ts";
import { buildUsers, buildWorld, content, manage, runMatrix, view, type MatrixRow, type World } from "../../support/matrix.ts";

interface DeployWorld extends World {
  environment: number;
  generation: number;
  pending: number;
  failed: number;
  log: number;
  older: number;
  newer: number;
  webhook: number;
}

const created = (expect: Record<string, number>) => Object.fromEntries(Object.entries(expect).map(([actor, status]) => [actor, status === 200 ? 201 : status])) as typeof view;
const accepted = (expect: Record<string, number>) => Object.fromEntries(Object.entries(expect).map(([actor, status]) => [actor, status === 200 ? 202 : status])) as typeof view;
/** The channel authorization answers 403 to everyone it refuses, a public project's visitors included. */
const channel = { ...view, stranger: 403, publicVisitor: 403 };

const ftpConfig = { host: "ftp.example.com", port: 21, username: "deployer", remote_path: "/www" };

async function deployment(pool: DatabasePool, world: World, environment: number, generation: number, status: string): Promise<number> {
  return pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into deployments (project_id, environment_id, code_generation_id, deployment_method, target_environment, status, user_id)
    values (${world.project}, ${environment}, ${generation}, 'ftp', 'production', ${status}, ${world.ids.owner}) returning id`);
}

/** What the deployment and webhook routes write (allowed cells show that their writes land here). */
const tables = ["project_archives", "environments", "deployments", "deployment_logs", "webhooks", "webhook_deliveries", "jobs", "audit_log", "outbox_events"];

const rows: MatrixRow<DeployWorld>[] = [
  { name: "delete a generation's archive", method: "DELETE", path: (w) => `/api/archives/${w.generation}`, expect: content, writes: ["project_archives"] },
  { name: "list environments", method: "GET", path: (w) => `/api/projects/${w.project}/environments`, expect: view },
  {
    name: "create environment",
    method: "POST",
    path: (w) => `/api/projects/${w.project}/environments`,
    body: () => ({ name: "Stage", type: "staging", ftp_config: { ...ftpConfig, password: "pw-0123456789" } }),
    expect: created(manage),
    writes: ["environments"],
  },
  { name: "update environment", method: "PUT", path: (w) => `/api/environments/${w.environment}`, body: () => ({ name: "Renamed" }), expect: manage, writes: ["environments"] },
  { name: "delete environment", method: "DELETE", path: (w) => `/api/environments/${w.environment}`, expect: manage, writes: ["environments"] },
  {
    name: "create deployment",
    method: "POST",
    path: () => "/api/deployments",
    body: (w) => ({ environment_id: w.environment, code_generation_id: w.generation }),
    expect: created(content),
    writes: ["deployments"],
  },
  { name: "deployment history", method: "GET", path: (w) => `/api/projects/${w.project}/deployments`, expect: view },
  { name: "deployment status", method: "GET", path: (w) => `/api/deployments/${w.pending}`, expect: view },
  { name: "deployment logs", method: "GET", path: (w) => `/api/deployments/${w.failed}/logs`, expect: view },
  { name: "execute", method: "POST", path: (w) => `/api/deployments/${w.pending}/execute`, expect: accepted(content), writes: ["deployments", "jobs"] },
  { name: "retry", method: "POST", path: (w) => `/api/deployments/${w.failed}/retry`, expect: accepted(content), writes: ["deployments", "jobs"] },
  { name: "rollback", method: "POST", path: (w) => `/api/deployments/${w.newer}/rollback`, body: (w) => ({ rollback_to: w.older }), expect: accepted(content), writes: ["deployments", "jobs"] },
  { name: "one log row", method: "GET", path: (w) => `/api/deployment-logs/${w.log}`, expect: view },
  { name: "clear logs", method: "POST", path: (w) => `/api/deployments/${w.failed}/logs/clear`, expect: manage, writes: ["deployment_logs"] },
  {
    name: "subscribe to the deployment channel",
    method: "POST",
    path: () => "/api/broadcasting/auth",
    body: (w) => ({ socket_id: "123.456", channel_name: `private-deployment.${w.pending}` }),
    expect: channel,
    writesNothing: true,
  },
  { name: "list webhooks", method: "GET", path: (w) => `/api/projects/${w.project}/webhooks`, expect: view },
  {
    name: "create webhook",
    method: "POST",
    path: (w) => `/api/projects/${w.project}/webhooks`,
    body: () => ({ event_type: "code_generated", target_url: "https://hooks.example.com/in", secret_key: "matrix-secret-0123456789" }),
    expect: created(manage),
    writes: ["webhooks"],
  },
  { name: "show webhook", method: "GET", path: (w) => `/api/webhooks/${w.webhook}`, expect: view },
  { name: "update webhook", method: "PUT", path: (w) => `/api/webhooks/${w.webhook}`, body: () => ({ is_active: false }), expect: manage, writes: ["webhooks"] },
  { name: "delete webhook", method: "DELETE", path: (w) => `/api/webhooks/${w.webhook}`, expect: manage, writes: ["webhooks"] },
  { name: "webhook deliveries", method: "GET", path: (w) => `/api/webhooks/${w.webhook}/deliveries`, expect: view },
  { name: "trigger webhook", method: "POST", path: (w) => `/api/webhooks/${w.webhook}/trigger`, body: () => ({}), expect: accepted(content), writes: ["webhook_deliveries"] },
  {
    name: "an environment of another project is not reached through this one's deployments",
    method: "POST",
    path: () => "/api/deployments",
    body: (w) => ({ project_id: w.otherProject, environment_id: w.environment, code_generation_id: w.generation }),
    expect: { owner: 422, teamAdmin: 422, member: 422, viewer: 422, stranger: 404, siteAdmin: 422 },
  },
];

t.test("deployment and webhook authorization matrix", async (t) => {
  const app = await startTestApp(t, { worker: false });
  const users = await buildUsers(app.pool);
  await runMatrix(t, app.url, rows, async () => {
    const world = await buildWorld(app.pool, users);
    const environment = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into environments (project_id, name, type, is_default, ftp_config, ftp_password_sealed)
      values (${world.project}, 'Live', 'production', true, ${sql.jsonb(ftpConfig)}, ${sql.binary(seal(app.config.appKey, "pw-0123456789"))})
      returning id`);
    const generation = await buildGeneration(app.pool, world.project, world.ids.owner);
    await app.pool.query(sql.type(z.object({}))`insert into project_archives (code_generation_id, status) values (${generation}, 'failed')`);
    const older = await deployment(app.pool, world, environment, generation, "succeeded");
    const newer = await deployment(app.pool, world, environment, generation, "succeeded");
    const failed = await deployment(app.pool, world, environment, generation, "failed");
    const log = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into deployment_logs (deployment_id, type, message) values (${failed}, 'error', 'It failed.') returning id`);
    const pending = await deployment(app.pool, world, environment, generation, "pending");
    const webhook = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into webhooks (project_id, event_type, target_url, secret_key_sealed, user_id)
      values (${world.project}, 'manual_trigger', 'https://hooks.example.com/in', ${sql.binary(seal(app.config.appKey, "secret-0123456789abcdef"))}, ${world.ids.owner})
      returning id`);
    return { ...world, environment, generation, pending, failed, log, older, newer, webhook };
  }, app.pool, { effects: true, tables });
});
