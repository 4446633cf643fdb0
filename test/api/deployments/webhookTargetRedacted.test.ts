/**
 * A webhook's target URL is often a credential of its own (a Slack or Teams incoming-webhook
 * URL, a `?token=`): whoever holds it can post to that channel. Whoever may configure the
 * webhook (the project's owner and admins) reads it whole; the project's members and viewers
 * read its origin only, flagged `target_url_redacted`, in the list and in the single read.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("webhook target URLs are shown whole only to who may configure them", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  await buildTeam(app.pool, owner.user.id, { [admin.user.id]: 2, [member.user.id]: 3, [viewer.user.id]: 4 }, [project]);
  const target = "https://hooks.example.com/services/T000/B000/XXXXsecretXXXX?token=abc";
  const created = await client(app.url, owner.token).post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: target, secret_key: "a-webhook-secret-0123456789" });
  t.equal(created.status, 201, created.text);
  t.match(created.body.webhook, { target_url: target, target_url_redacted: false });
  const bare = await client(app.url, owner.token).post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "https://receiver.example.com", secret_key: "a-webhook-secret-0123456789" });
  const id = created.body.webhook.id;

  for (const [who, token] of [["owner", owner.token], ["admin", admin.token]] as const) {
    const api = client(app.url, token);
    t.match((await api.get(`/api/webhooks/${id}`)).body.webhook, { target_url: target, target_url_redacted: false }, `${who}: whole`);
    t.match((await api.get(`/api/projects/${project}/webhooks`)).body.webhooks, [{ target_url: target, target_url_redacted: false }, { target_url: "https://receiver.example.com" }]);
  }
  for (const [who, token] of [["member", member.token], ["viewer", viewer.token]] as const) {
    const api = client(app.url, token);
    const one = await api.get(`/api/webhooks/${id}`);
    t.equal(one.status, 200);
    t.match(one.body.webhook, { target_url: "https://hooks.example.com/…", target_url_redacted: true }, `${who}: the origin only`);
    const list = await api.get(`/api/projects/${project}/webhooks`);
    t.same(
      list.body.webhooks.map((w: { target_url: string; target_url_redacted: boolean }) => [w.target_url, w.target_url_redacted]),
      [
        ["https://hooks.example.com/…", true],
        ["https://receiver.example.com/", true],
      ],
    );
    t.notOk(JSON.stringify(list.body).includes("XXXXsecretXXXX") || JSON.stringify(list.body).includes("token="), `${who}: nothing of the path or query in the answer`);
  }
  t.equal(bare.status, 201);
});
