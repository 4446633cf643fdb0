/**
 * A deployment queued when its project is deleted does not run: deleting the project cancels
 * it (failed with the reason, its job cancelled), and one a worker starts after the deletion
 * anyway (its job was already held, or it waits for a retry) fails before it connects. The FTP
 * server sees nothing of either; a live project's deployment to the same server goes out.
 */
import { readdir } from "node:fs/promises";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";
import { until } from "../../support/wait.ts";

t.test("a deleted project's queued deployments do not run", async (t) => {
  const peer = await startFtpPeer();
  t.teardown(() => peer.close());
  // Queued while no worker runs; the worker starts once the projects are deleted.
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const queue = async (folder: string) => {
    const project = await buildProject(app.pool, user.id);
    const ftp_config = { host: peer.host, port: peer.port, username: peer.username, password: peer.password, remote_path: `/${folder}` };
    const env = await buildEnvironment(app.url, token, project, { ftp_config });
    const generation = await buildGeneration(app.pool, project, user.id, { "index.html": `<p>${folder}</p>` });
    const created = await api.post("/api/deployments", { environment_id: env, code_generation_id: generation });
    const executed = await api.post(`/api/deployments/${created.body.deployment.id}/execute`);
    if (executed.status !== 202) throw new Error(executed.text);
    return { project, deployment: created.body.deployment.id as number, job: executed.body.job.id as number };
  };
  const live = await queue("live");
  const deleted = await queue("deleted");
  const raced = await queue("raced");

  t.equal((await api.delete(`/api/projects/${deleted.project}`)).status, 200);
  // A deletion the route's cancellation did not see (a worker held the job already).
  await app.pool.query(sql.type(z.object({}))`update projects set deleted_at = now() where id = ${raced.project}`);
  const rows = sql.type(z.object({ status: z.string(), error: z.string().nullable(), error_code: z.string().nullable(), job_status: z.string() }));
  const record = (id: number) =>
    app.pool.one(rows`select d.status, d.error, d.error_code, j.status as job_status from deployments d join jobs j on j.id = d.job_id where d.id = ${id}`);
  t.match(await record(deleted.deployment), { status: "failed", error_code: "project_deleted", error: /project was deleted/, job_status: "cancelled" }, "cancelled by the deletion");

  await startTestApp(t, { db: app.db, worker: true });
  t.match(await waitForDeployment(app.url, token, live.deployment), { status: "succeeded" });
  await until(async () => ["succeeded", "failed"].includes((await record(raced.deployment)).status), { message: "the raced deployment to settle" });
  t.match(await record(raced.deployment), { status: "failed", error_code: "project_deleted", error: /project was deleted/, job_status: "failed" });
  t.match(await record(deleted.deployment), { status: "failed", error_code: "project_deleted" }, "still cancelled");
  t.same(await readdir(peer.root), ["live"], "only the live project's files reached the server");
});
