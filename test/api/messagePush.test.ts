/**
 * Push notifications of new messages, received and decrypted by a push service on loopback:
 * a new thread goes to the project's people, a reply to the thread's participants (who
 * started it, wrote in it or opened it); never to the author, a user who switched
 * `message_posted` push off, or someone who no longer sees the project; nothing for a
 * refused post or an edit.
 */
import t from "tap";
import webpush from "web-push";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { startPushService } from "../support/peers/pushService.ts";
import { until } from "../support/wait.ts";

const vapid = webpush.generateVAPIDKeys();

t.test("messages notify by push", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: "mailto:ops@example.test" } });
  const push = await startPushService(t);
  const people = {
    owner: await buildUserWithToken(app.pool, { name: "Olivia Owner" }),
    member: await buildUserWithToken(app.pool, { name: "Max Member" }),
    viewer: await buildUserWithToken(app.pool, { name: "Vera Viewer" }),
    quiet: await buildUserWithToken(app.pool, { name: "Quinn Quiet" }),
    stranger: await buildUserWithToken(app.pool, { name: "Stan Stranger" }),
  };
  type Who = keyof typeof people;
  const api = (who: Who) => client(app.url, people[who].token);
  const endpointOf = new Map<string, Who>();
  for (const who of Object.keys(people) as Who[]) {
    const subscription = push.subscription();
    t.equal((await api(who).post("/api/push/subscribe", subscription)).status, 201);
    endpointOf.set(subscription.endpoint.replace(/^.*\/push\//, ""), who);
  }
  t.equal((await api("quiet").put("/api/settings", { notifications: { message_posted: { push: false } } })).status, 200);
  const project = (await api("owner").post("/api/projects", { name: "Talk" })).body.project;
  const team = await buildTeam(app.pool, people.owner.user.id, { [people.member.user.id]: 3, [people.viewer.user.id]: 4, [people.quiet.user.id]: 3 }, [project.id]);

  /** What each person's browser received since the last call (decrypted), once every queued push job has finished. */
  let seen = 0;
  const delivered = async () => {
    await until(
      async () =>
        (await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(*)::int as n from jobs where kind = 'push__send' and status not in ('succeeded', 'failed', 'cancelled')`)) === 0,
      { timeoutMs: 60_000, message: "the push jobs to finish" },
    );
    const fresh = push.received.slice(seen);
    seen = push.received.length;
    const byWho: Partial<Record<Who, unknown[]>> = {};
    for (const message of fresh) (byWho[endpointOf.get(message.id)!] ??= []).push(JSON.parse(push.decrypt(message)));
    return byWho;
  };
  const pushJobs = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs where kind = 'push__send'`);

  const created = await api("owner").post("/api/messages/threads", { subject: "Kick-off", project_id: project.id, body: "Hello   all,\nwelcome" });
  t.equal(created.status, 201, created.text);
  const threadId: number = created.body.thread.id;
  const url = `/messages/threads/${threadId}`;

  await t.test("a new thread goes to the project's people, not its author or those who chose no push", async (t) => {
    const expected = { kind: "message_posted", title: "New thread: Kick-off", body: "Olivia Owner: Hello all, welcome", url };
    t.same(await delivered(), { member: [expected], viewer: [expected] });
  });

  await t.test("a reply goes to the thread's participants only", async (t) => {
    t.equal((await api("member").get(`/api/messages/threads/${threadId}`)).status, 200, "the member opens the thread");
    t.equal((await api("member").post(`/api/messages/threads/${threadId}`, { body: "On it" })).status, 201);
    t.same(await delivered(), { owner: [{ kind: "message_posted", title: "New message in Kick-off", body: "Max Member: On it", url }] }, "the viewer never opened it");
    t.equal((await api("viewer").get(`/api/messages/threads/${threadId}`)).status, 200, "now the viewer has");
    t.equal((await api("owner").post(`/api/messages/threads/${threadId}`, { body: "Thanks" })).status, 201);
    const thanks = { kind: "message_posted", title: "New message in Kick-off", body: "Olivia Owner: Thanks", url };
    t.same(await delivered(), { member: [thanks], viewer: [thanks] });
  });

  await t.test("refused posts and edits notify nobody", async (t) => {
    const before = await pushJobs();
    t.equal((await api("stranger").post(`/api/messages/threads/${threadId}`, { body: "let me in" })).status, 404);
    t.equal((await api("member").post(`/api/messages/threads/${threadId}`, { body: "" })).status, 422);
    const mine = (await api("owner").get(`/api/messages/threads/${threadId}`)).body.messages.at(-1);
    t.equal((await api("owner").put(`/api/messages/${mine.id as number}`, { body: "Thanks a lot" })).status, 200);
    t.equal(await pushJobs(), before, "no push job queued");
    t.same(await delivered(), {});
  });

  await t.test("a participant who left the project or chose no push is not told", async (t) => {
    t.equal((await api("quiet").get(`/api/messages/threads/${threadId}`)).status, 200, "a participant too");
    await app.pool.query(sql.type(z.object({}))`delete from team_members where team_id = ${team} and user_id = ${people.member.user.id}`);
    t.equal((await api("viewer").post(`/api/messages/threads/${threadId}`, { body: "Bye" })).status, 201);
    t.same(await delivered(), { owner: [{ kind: "message_posted", title: "New message in Kick-off", body: "Vera Viewer: Bye", url }] });
  });
});
