/**
 * Comments of kanban cards: JSON and multipart, replies one level deep, edits by the author,
 * deletion by the author or a manager, and attachments as a patron feature: a non-patron's
 * attachment is refused with 403 patron_required and nothing is stored (no row, no file);
 * a patron's files are stored with a safe name and downloaded by signed link. Deleting the
 * card removes comments, attachments and activities, and the sweep removes the files.
 */
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { sweepMediaGarbage } from "../../../shared/media/garbage.ts";
import { startTestApp } from "../../support/app.ts";
import { buildTeam, buildUserWithToken, makePatron } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { until } from "../../support/wait.ts";

const countRow = z.object({ n: z.number() });

t.test("kanban comments and their attachments", async (t) => {
  const app = await startTestApp(t, { env: { UPLOAD_LIMIT_BYTES: "4096" } });
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const patron = await buildUserWithToken(app.pool);
  await makePatron(app.pool, patron.user.id);
  const api = client(app.url, owner.token);
  const memberApi = client(app.url, member.token);
  const project = (await api.post("/api/projects", { name: "Comments" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3, [patron.user.id]: 3 }, [project.id]);
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "B", columns: ["A"] })).body.board;
  const card = (await api.post("/api/kanban-cards", { column_id: board.columns[0].id, title: "Discuss" })).body.card;
  const attachmentsStored = async () => ({
    rows: await app.pool.oneFirst(sql.type(countRow)`select count(*)::int as n from attachments`),
    files: (await app.deps.storage.list("attachments/")).length,
  });
  const multipart = (token: string, path: string, fields: Record<string, string>, files: [string, string, string][]) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    for (const [field, content, name] of files) form.append(field, new Blob([content]), name);
    return request(app.url, "POST", path, { token, body: form, raw: true });
  };

  t.test("JSON and multipart comments, replies, edits", async (t) => {
    const plain = await memberApi.post(`/api/kanban-cards/${card.id}/comments`, { body: "First" });
    t.equal(plain.status, 201, plain.text);
    t.match(plain.body.comment, { body: "First", author: { id: member.user.id }, attachments: [], replies: [], parent_id: null });
    const form = await multipart(member.token, `/api/kanban-cards/${card.id}/comments`, { body: "Via form" }, []);
    t.equal(form.status, 201, form.text);
    const reply = await api.post(`/api/comments/${plain.body.comment.id}/replies`, { body: "Answer" });
    t.equal(reply.status, 201);
    const nested = await memberApi.post(`/api/comments/${reply.body.comment.id}/replies`, { body: "Answer to the answer" });
    t.equal(nested.body.comment.parent_id, plain.body.comment.id, "a reply to a reply answers the top comment");
    t.equal((await api.put(`/api/comments/${plain.body.comment.id}`, { body: "changed" })).status, 403, "only the author edits");
    t.equal((await memberApi.put(`/api/comments/${plain.body.comment.id}`, { body: "Edited" })).body.comment.body, "Edited");
    t.equal((await memberApi.post(`/api/kanban-cards/${card.id}/comments`, { body: "  " })).status, 422);
    const full = (await api.get(`/api/kanban-cards/${card.id}`)).body.card;
    t.same(full.comments.map((c: { body: string; replies: { body: string }[] }) => [c.body, c.replies.map((r) => r.body)]), [
      ["Edited", ["Answer", "Answer to the answer"]],
      ["Via form", []],
    ]);
    t.equal(full.comments_count, 4);
    t.ok(full.activities.some((a: { type: string }) => a.type === "commented"));
    t.equal((await memberApi.delete(`/api/comments/${reply.body.comment.id}`)).status, 403, "a member may not delete another's comment");
    t.equal((await api.delete(`/api/comments/${form.body.comment.id}`)).status, 200, "the owner may");
  });

  t.test("a non-patron's attachment is refused and nothing is stored", async (t) => {
    const before = await attachmentsStored();
    const commentsBefore = await app.pool.oneFirst(sql.type(countRow)`select count(*)::int as n from kanban_comments`);
    const refused = await multipart(member.token, `/api/kanban-cards/${card.id}/comments`, { body: "with file" }, [["attachments[0]", "secret", "a.txt"]]);
    t.equal(refused.status, 403);
    t.equal(refused.body.code, "patron_required");
    t.same(await attachmentsStored(), before);
    t.equal(await app.pool.oneFirst(sql.type(countRow)`select count(*)::int as n from kanban_comments`), commentsBefore, "no comment either");
  });

  t.test("a patron's attachments: stored, named safely, downloaded by signed link; too large is 413", async (t) => {
    const made = await multipart(patron.token, `/api/kanban-cards/${card.id}/comments`, { body: "files" }, [
      ["attachments[0]", "%PDF-1.4 fake", "C:\\Users\\x\\spec.pdf"],
      ["attachments[1]", "plain notes", "notes\u0001\u202e.txt"],
    ]);
    t.equal(made.status, 201, made.text);
    const [pdf, notes] = made.body.comment.attachments;
    t.match(pdf, { file_name: "spec.pdf", content_type: "application/pdf" });
    t.match(notes, { file_name: "notes.txt", content_type: "text/plain; charset=utf-8" });
    const res = await fetch(pdf.download_url.replace(/^https?:\/\/[^/]+/, app.url));
    t.equal(res.status, 200);
    t.equal(await res.text(), "%PDF-1.4 fake");
    t.match(res.headers.get("content-disposition"), /^attachment;/);
    const before = await attachmentsStored();
    const big = await multipart(patron.token, `/api/kanban-cards/${card.id}/comments`, { body: "big" }, [["attachments[0]", "x".repeat(5000), "big.txt"]]);
    t.equal(big.status, 413);
    t.same(await attachmentsStored(), before);
    t.equal((await multipart(owner.token, `/api/kanban-cards/${card.id}/comments`, { body: "x", "attachments[0]": "not a file" }, [])).status, 422);
  });

  t.test("deleting the card removes comments, attachments and activities; the sweep removes the files", async (t) => {
    t.ok((await attachmentsStored()).rows > 0);
    t.equal((await api.delete(`/api/kanban-cards/${card.id}`)).status, 200);
    const left = await app.pool.one(sql.type(z.object({ comments: z.number(), activities: z.number(), attachments: z.number() }))`
      select (select count(*)::int from kanban_comments) as comments, (select count(*)::int from kanban_activities where card_id = ${card.id}) as activities,
        (select count(*)::int from attachments) as attachments`);
    t.same(left, { comments: 0, activities: 0, attachments: 0 });
    await sweepMediaGarbage(app.pool, app.deps.storage);
    t.equal((await app.deps.storage.list("attachments/")).length, 0);
  });
});

t.test("a reply to a comment deleted while the reply waited is 404, not a new top comment", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Race" })).body.project;
  const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "B", columns: ["A"] })).body.board;
  const card = (await api.post("/api/kanban-cards", { column_id: board.columns[0].id, title: "Discuss" })).body.card;
  const parent = (await api.post(`/api/kanban-cards/${card.id}/comments`, { body: "first" })).body.comment;

  // The board's row lock (which every change of the card takes first) holds the reply up
  // after it found its parent; meanwhile the parent goes.
  const locker = new pg.Client({ connectionString: app.db.url });
  await locker.connect();
  t.teardown(() => locker.end());
  await locker.query("begin");
  await locker.query("select 1 from kanban_boards where id = $1 for update", [board.id]);
  const replying = api.post(`/api/comments/${parent.id}/replies`, { body: "late reply" });
  await until(
    async () => (await locker.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`)).rowCount! > 0,
    { message: "the reply waiting on the board's lock" },
  );
  await locker.query("delete from kanban_comments where id = $1", [parent.id]);
  await locker.query("commit");
  const reply = await replying;
  t.equal(reply.status, 404, reply.text);
  t.match(reply.body, { code: "not_found" });
  const left = await app.pool.anyFirst(sql.type(z.object({ body: z.string() }))`select body from kanban_comments where card_id = ${card.id}`);
  t.same(left, [], "nothing written");
});
