/**
 * The limit of files on one message holds under concurrency: uploads sent at once to a
 * message with room for a few get exactly that many 201s, the rest 422, and no more rows
 * (nor stored files) than the limit.
 */
import t from "tap";
import { z } from "zod";
import { MAX_MESSAGE_ATTACHMENTS } from "../../api/routes/messages/messages.router.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

t.test("concurrent uploads to one message stop at its limit", async (t) => {
  // Room for all eight at once: this is about the message's limit, not the uploads-per-account cap.
  const app = await startTestApp(t, { env: { UPLOADS_PER_USER: "16" } });
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Files" })).body.project;
  const thread = (await api.post("/api/messages/threads", { subject: "Files", project_id: project.id, body: "here" })).body.thread;
  const message = thread.messages[0];
  const upload = (n: number) => {
    const form = new FormData();
    form.append("file", new Blob([`file ${n}`]), `file-${n}.txt`);
    return request(app.url, "POST", `/api/messages/${message.id}/attachments`, { token: owner.token, body: form, raw: true });
  };

  const room = 3;
  for (let n = 0; n < MAX_MESSAGE_ATTACHMENTS - room; n += 1) t.equal((await upload(n)).status, 201);
  const answers = await Promise.all(Array.from({ length: 8 }, (_, n) => upload(100 + n)));
  const statuses = answers.map((a) => a.status).sort();
  t.same(statuses, [...Array(room).fill(201), ...Array(8 - room).fill(422)], "as many as there was room for, the others refused");
  for (const refused of answers.filter((a) => a.status === 422)) t.match(refused.body, { code: "validation_failed", errors: { file: [/at most/] } });
  const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from attachments where message_id = ${message.id}`);
  t.equal(count, MAX_MESSAGE_ATTACHMENTS, "the message holds exactly its limit");
  const stored = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from stored_files where key like 'attachments/messages/%'`);
  t.equal(stored, MAX_MESSAGE_ATTACHMENTS, "and storage only their files");
});
