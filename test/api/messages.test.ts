/**
 * Message threads through the HTTP API: creation in a project, the caller's threads with
 * counts, unread counts and newest activity first, reading, posting, editing and deleting
 * (author, or a manager of the project), attachments by signed and expiring links, and
 * MessagePosted seen by pusher-js on the thread's channel.
 */
import t from "tap";
import { attachmentLink } from "../../shared/attachments/links.ts";
import { startTestApp } from "../support/app.ts";
import { buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { connectPusher } from "../support/pusher.ts";

t.test("message threads", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const memberApi = client(app.url, member.token);
  const project = (await api.post("/api/projects", { name: "Talk" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3, [viewer.user.id]: 4 }, [project.id]);

  const first = await api.post("/api/messages/threads", { subject: "Kick-off", project_id: project.id, body: "Hello all" });
  t.equal(first.status, 201, first.text);
  const thread = first.body.thread;

  t.test("create, list with counts and unread, newest activity first", async (t) => {
    t.match(thread, { subject: "Kick-off", project_id: project.id, created_by: owner.user.id, messages_count: 1, unread_count: 0, messages: [{ body: "Hello all", user: { id: owner.user.id } }] });
    t.equal((await client(app.url, stranger.token).post("/api/messages/threads", { subject: "x", project_id: project.id, body: "x" })).status, 404);
    t.equal((await api.post("/api/messages/threads", { subject: "", project_id: project.id, body: "x" })).status, 422);
    const second = (await memberApi.post("/api/messages/threads", { subject: "Later", project_id: project.id, body: "news" })).body.thread;
    const listed = await api.get("/api/messages/threads");
    t.equal(listed.status, 200);
    t.same(listed.body.data.map((x: { id: number }) => x.id), [second.id, thread.id], "newest activity first");
    t.match(listed.body.data[0], { messages_count: 1, unread_count: 1 });
    t.match(listed.body.meta, { total: 2, current_page: 1 });
    t.equal((await client(app.url, stranger.token).get("/api/messages/threads")).body.data.length, 0);
    const posted = await api.post(`/api/messages/threads/${thread.id}`, { body: "bump" });
    t.equal(posted.status, 201);
    t.same((await api.get("/api/messages/threads")).body.data.map((x: { id: number }) => x.id), [thread.id, second.id], "a post moves the thread up");
    t.equal((await memberApi.get("/api/messages/threads")).body.data.find((x: { id: number }) => x.id === thread.id).unread_count, 2);
    const read = await memberApi.get(`/api/messages/threads/${thread.id}`);
    t.equal(read.status, 200);
    t.same(read.body.messages.map((m: { body: string }) => m.body), ["Hello all", "bump"]);
    t.equal((await memberApi.get("/api/messages/threads")).body.data.find((x: { id: number }) => x.id === thread.id).unread_count, 0, "reading marks read");
    t.equal((await client(app.url, stranger.token).get(`/api/messages/threads/${thread.id}`)).status, 404);
  });

  t.test("edit own, delete own or as the project's manager", async (t) => {
    const mine = (await memberApi.post(`/api/messages/threads/${thread.id}`, { body: "typo" })).body.message_data;
    t.equal((await api.put(`/api/messages/${mine.id}`, { body: "fixed" })).status, 403, "not the author");
    const edited = await memberApi.put(`/api/messages/${mine.id}`, { body: "fixed" });
    t.equal(edited.status, 200);
    t.equal(edited.body.message_data.body, "fixed");
    const ownerMessage = (await api.post(`/api/messages/threads/${thread.id}`, { body: "owner's" })).body.message_data;
    t.equal((await memberApi.delete(`/api/messages/${ownerMessage.id}`)).status, 403);
    t.equal((await client(app.url, stranger.token).delete(`/api/messages/${ownerMessage.id}`)).status, 404);
    t.equal((await api.delete(`/api/messages/${mine.id}`)).status, 200, "the owner deletes anyone's");
    t.equal((await api.delete(`/api/messages/${ownerMessage.id}`)).status, 200);
    t.equal((await api.delete(`/api/messages/${ownerMessage.id}`)).status, 404);
  });

  t.test("attachments: signed links, tampered and expired links, safe serving", async (t) => {
    const message = (await memberApi.post(`/api/messages/threads/${thread.id}`, { body: "see file" })).body.message_data;
    const form = new FormData();
    form.append("file", new Blob(["<html><script>alert(1)</script></html>"], { type: "text/html" }), "../../etc/re\u0007port.html");
    const uploaded = await request(app.url, "POST", `/api/messages/${message.id}/attachments`, { token: member.token, body: form, raw: true });
    t.equal(uploaded.status, 201, uploaded.text);
    const attachment = uploaded.body.attachment;
    t.match(attachment, { file_name: "report.html", content_type: "text/plain; charset=utf-8", byte_size: 38 });
    const form2 = new FormData();
    form2.append("file", new Blob(["x"]), "x.txt");
    t.equal((await request(app.url, "POST", `/api/messages/${message.id}/attachments`, { token: owner.token, body: form2, raw: true })).status, 403, "only the author attaches");
    const link = new URL(attachment.download_url);
    t.equal(attachment.download_expires_at, new Date(Number(link.searchParams.get("expires")) * 1000).toISOString(), "the expiry shown is the link's");
    const get = (path: string) => fetch(`${app.url}${path}`);
    for (const round of [1, 2]) {
      const res = await get(`${link.pathname}${link.search}`);
      t.equal(res.status, 200, `the link works (${round})`);
      t.equal(await res.text(), "<html><script>alert(1)</script></html>");
      t.match(res.headers.get("content-disposition"), /^attachment; filename="report.html"/);
      t.equal(res.headers.get("x-content-type-options"), "nosniff");
      t.match(res.headers.get("content-type"), /^text\/plain/);
    }
    const signature = link.searchParams.get("signature")!;
    const tampered = `${link.pathname}?expires=${Number(link.searchParams.get("expires")) + 60}&signature=${signature}`;
    const other = `/api/attachments/${attachment.id + 1}/download?expires=${link.searchParams.get("expires")}&signature=${signature}`;
    // A signature of another length must be refused like a wrong one, not reach the
    // constant-time compare (which throws on buffers of different lengths: a 500).
    const short = `${link.pathname}?expires=${link.searchParams.get("expires")}&signature=${signature.slice(0, 10)}`;
    for (const path of [tampered, other, short]) {
      const res = await get(path);
      t.equal(res.status, 403, path);
      t.equal(((await res.json()) as { code: string }).code, "invalid_signature");
    }
    const expired = attachmentLink(app.config.appKey, attachment.id, -60_000);
    t.equal((await get(expired.path)).status, 403, "a correctly signed link past its expiry");
    const read = await memberApi.get(`/api/messages/threads/${thread.id}`);
    t.match(read.body.messages.find((m: { id: number }) => m.id === message.id).attachments, [{ id: attachment.id, file_name: "report.html" }]);
  });

  t.test("attachment names with apostrophes, parentheses and non-ASCII keep a valid Content-Disposition (RFC 8187)", async (t) => {
    const message = (await memberApi.post(`/api/messages/threads/${thread.id}`, { body: "named file" })).body.message_data;
    const name = "Q3 plan (draft) \u2013 it's 100% done!.txt";
    const form = new FormData();
    form.append("file", new Blob(["plan"]), name);
    const uploaded = await request(app.url, "POST", `/api/messages/${message.id}/attachments`, { token: member.token, body: form, raw: true });
    t.equal(uploaded.status, 201, uploaded.text);
    t.equal(uploaded.body.attachment.file_name, name);
    const link = new URL(uploaded.body.attachment.download_url);
    const res = await fetch(`${app.url}${link.pathname}${link.search}`);
    t.equal(res.status, 200);
    const header = res.headers.get("content-disposition") ?? "";
    const match = /^attachment; filename="([^"\\]*)"; filename\*=UTF-8''(.*)$/.exec(header);
    t.ok(match, header);
    // ext-value = charset "'" [ language ] "'" value-chars; value-chars = *( pct-encoded / attr-char )
    t.match(match?.[2], /^(?:%[0-9A-F]{2}|[A-Za-z0-9!#$&+.^_`|~-])+$/, "only attr-chars and escapes");
    t.equal(decodeURIComponent(match?.[2] ?? ""), name, "which decode to the name");
    t.equal(match?.[1], "Q3 plan (draft) _ it's 100_ done!.txt", "an ASCII fallback without quotes, backslashes or percent signs");
  });

  t.test("MessagePosted on the thread channel; a stranger's subscription is refused", async (t) => {
    const pusher = await connectPusher(t, app.url, "test-app-key", viewer.token);
    const channel = await pusher.subscribe(`private-message-thread.${thread.id}`);
    const next = pusher.next(channel, "MessagePosted");
    t.equal((await memberApi.post(`/api/messages/threads/${thread.id}`, { body: "live" })).status, 201);
    t.match(await next, { thread_id: thread.id, message: { body: "live", user: { id: member.user.id } } });
    const outsider = await connectPusher(t, app.url, "test-app-key", stranger.token);
    const refused = await outsider.subscribe(`private-message-thread.${thread.id}`).then(
      () => undefined,
      (e: { status?: number }) => e,
    );
    t.equal(refused?.status, 403);
  });
});
