import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { recordGeneration } from "../../../shared/generations/record.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const archiveJob = z.object({ job_id: z.number().nullable(), status: z.string() });

t.test("an archive whose build job was cancelled is built again on download", async (t) => {
  // No worker at first: the build stays queued until it is cancelled.
  const idle = await startTestApp(t, { env: { SYNC_WAIT_MS: "200" } });
  const { user, token } = await buildUserWithToken(idle.pool);
  const project = await buildProject(idle.pool, user.id);
  const id = await recordGeneration(idle.pool, { projectId: project, userId: user.id, templateId: null, generatorId: null, schemaId: null, values: {}, files: { "a.txt": "hello" }, jobId: null });
  const built = await idle.pool.one(sql.type(archiveJob)`select job_id, status from project_archives where code_generation_id = ${id}`);
  t.equal((await client(idle.url, token).post(`/api/jobs/${built.job_id}/cancel`)).status, 200, "the owner cancels the build");

  const waiting = await client(idle.url, token).get(`/api/archives/${id}/download`);
  t.equal(waiting.status, 202);
  t.not(waiting.body.job.id, built.job_id, "a new build, not the cancelled one");
  t.equal(waiting.body.job.status, "queued");

  const app = await startTestApp(t, { db: idle.db, worker: true });
  const res = await client(app.url, token).get(`/api/archives/${id}/download`);
  t.equal(res.status, 200);
  t.equal(res.headers.get("content-type"), "application/zip");
});
