/**
 * Deployment log detail: one row by id (`GET /deployment-logs/{id}`) and the list's filters
 * `type` and `after_id`, which a live view uses to catch up after reconnecting. Rows are
 * written by the same sink the deployers use (`appendLog`), so they also went out as
 * `LogAdded`.
 */
import t from "tap";
import { appendLog } from "../../../shared/deployments/logs.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";

t.test("deployment log detail and filters", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const generation = await buildGeneration(app.pool, project, user.id);
  const environment = await buildEnvironment(app.url, token, project, {
    ftp_config: { host: "ftp.example.com", port: 21, username: "deployer", password: "pw-0123456789", remote_path: "/www" },
  });
  const created = await api.post("/api/deployments", { environment_id: environment, code_generation_id: generation });
  t.equal(created.status, 201, created.text);
  const deployment = created.body.deployment.id as number;
  const written: Awaited<ReturnType<typeof appendLog>>[] = [];
  for (const [type, message] of [
    ["info", "Connecting."],
    ["warning", "Passive mode is off; using passive mode."],
    ["info", "Uploaded 5 files."],
    ["error", "The server closed the connection."],
    ["success", "Done."],
  ] as const) {
    written.push(await appendLog(app.pool, deployment, "7", { type, message, metadata: { step: written.length + 1 } }));
  }
  const ids = written.map((row) => row.id);

  await t.test("GET /deployment-logs/{id}", async (t) => {
    const res = await api.get(`/api/deployment-logs/${ids[1]}`);
    t.equal(res.status, 200, res.text);
    t.same(res.body.log, {
      id: ids[1],
      deployment_id: deployment,
      type: "warning",
      message: "Passive mode is off; using passive mode.",
      metadata: { step: 2 },
      task_id: "7",
      created_at: written[1]!.created_at.toISOString(),
    });
    t.equal((await request(app.url, "GET", `/api/deployment-logs/${ids[1]}`)).status, 401, "needs a token");
    t.equal((await request(app.url, "GET", `/api/deployment-logs/${ids[1]}`, { token: stranger.token })).status, 404, "a stranger does not learn it exists");
    t.equal((await api.get(`/api/deployment-logs/${ids.at(-1)! + 1000}`)).status, 404);
    t.equal((await api.get("/api/deployment-logs/abc")).status, 404, "a malformed id cannot exist");
  });

  await t.test("type filter, single, comma-separated and repeated", async (t) => {
    const types = async (query: string) => ((await api.get(`/api/deployments/${deployment}/logs${query}`)).body.logs as { type: string }[]).map((l) => l.type);
    t.same(await types("?type=error"), ["error"]);
    t.same(await types("?type=warning,error"), ["warning", "error"]);
    t.same(await types("?type=info&type=success"), ["info", "info", "success"]);
    t.same(await types(""), ["info", "warning", "info", "error", "success"], "no filter: everything, oldest first");
    const bad = await api.get(`/api/deployments/${deployment}/logs?type=debug`);
    t.equal(bad.status, 422);
    t.match(bad.body, { code: "validation_failed", errors: { "type.0": [/must be one of info, success, warning, error/] } });
  });

  await t.test("after_id resumes a live view, combined with type", async (t) => {
    const after = await api.get(`/api/deployments/${deployment}/logs?after_id=${ids[2]}`);
    t.same(after.body.logs.map((l: { id: number }) => l.id), ids.slice(3));
    const both = await api.get(`/api/deployments/${deployment}/logs?after_id=${ids[0]}&type=info`);
    t.same(both.body.logs.map((l: { id: number }) => l.id), [ids[2]]);
    t.same((await api.get(`/api/deployments/${deployment}/logs?after_id=${ids.at(-1)}`)).body, { logs: [] }, "nothing new: the spec's shape, empty");
    t.equal((await api.get(`/api/deployments/${deployment}/logs?after_id=-1`)).status, 422);
  });
});
