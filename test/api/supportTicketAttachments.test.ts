/**
 * Files on support tickets through HTTP: on opening and on replies of the user and of
 * administrators, stored through the storage layer with the type read from their bytes,
 * downloadable by the signed link; an internal note's files never reach the user; someone
 * else's ticket or a refused form stores nothing.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

t.test("support ticket attachments", async (t) => {
  const app = await startTestApp(t);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const owner = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const stored = async () => ({
    rows: await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from attachments`),
    files: (await app.deps.storage.list("attachments/")).length,
  });
  const form = (token: string, path: string, fields: Record<string, string>, files: [string, Buffer | string, string][]) => {
    const data = new FormData();
    for (const [k, v] of Object.entries(fields)) data.append(k, v);
    for (const [field, content, name] of files) data.append(field, new Blob([content]), name);
    return request(app.url, "POST", path, { token, body: data, raw: true });
  };
  const fetchText = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
  };

  const opened = await form(owner.token, "/api/support-tickets", { subject: "Broken page", body: "See the screenshot.", category: "bug" }, [
    ["attachments[0]", png, "../../screen shot.png"],
    ["attachments[1]", "log line 1\n", "trace.html"],
  ]);
  t.equal(opened.status, 201, opened.text);
  const ticketId: number = opened.body.ticket.id;
  const [shot, trace] = opened.body.ticket.messages[0].attachments;
  t.match(shot, { file_name: "screen shot.png", content_type: "image/png", byte_size: png.length });
  t.match(trace, { file_name: "trace.html", content_type: "text/plain; charset=utf-8" }, "the type comes from the bytes, never HTML");
  const downloaded = await fetchText(shot.download_url);
  t.equal(downloaded.status, 200);
  t.same(downloaded.body, png);
  t.same(await stored(), { rows: 2, files: 2 });

  t.test("a JSON ticket still works and carries no files", async (t) => {
    const plain = await client(app.url, owner.token).post("/api/support-tickets", { subject: "No files", body: "Just text." });
    t.equal(plain.status, 201, plain.text);
    t.same(plain.body.ticket.messages[0].attachments, []);
  });

  await t.test("administrators reply and note with files; the user never sees a note's files", async (t) => {
    const note = await form(admin.token, `/api/admin/support-tickets/${ticketId}/replies`, { body: "Internal: see server log.", is_internal: "true" }, [["attachments", "secret server log", "server.log"]]);
    t.equal(note.status, 201, note.text);
    t.equal(note.body.reply.is_internal, true);
    t.equal(note.body.reply.attachments.length, 1);
    const reply = await form(admin.token, `/api/admin/support-tickets/${ticketId}/replies`, { body: "Here is a fix." }, [["attachments[0]", "patch", "fix.txt"]]);
    t.equal(reply.status, 201, reply.text);
    t.equal(reply.body.reply.is_internal, false);

    const seen = await client(app.url, owner.token).get(`/api/support-tickets/${ticketId}`);
    const names = seen.body.ticket.messages.flatMap((m: { attachments: { file_name: string }[] }) => m.attachments.map((a) => a.file_name));
    t.same(names, ["screen shot.png", "trace.html", "fix.txt"]);
    t.notOk(seen.text.includes("server.log"), "no trace of the note's file");
    const full = await client(app.url, admin.token).get(`/api/admin/support-tickets/${ticketId}`);
    t.ok(full.text.includes("server.log"), "administrators see it");

    const mine = await form(owner.token, `/api/support-tickets/${ticketId}/replies`, { body: "Thanks, one more." }, [["attachments[0]", png, "after.png"]]);
    t.equal(mine.status, 201, mine.text);
    t.equal(mine.body.reply.attachments[0].content_type, "image/png");
  });

  await t.test("refusals store nothing", async (t) => {
    const before = await stored();
    const foreign = await form(stranger.token, `/api/support-tickets/${ticketId}/replies`, { body: "me too" }, [["attachments[0]", "x", "x.txt"]]);
    t.equal(foreign.status, 404);
    const notAdmin = await form(stranger.token, `/api/admin/support-tickets/${ticketId}/replies`, { body: "hi" }, [["attachments[0]", "x", "x.txt"]]);
    t.equal(notAdmin.status, 403);
    const tooMany = await form(owner.token, `/api/support-tickets/${ticketId}/replies`, { body: "many" }, Array.from({ length: 6 }, (_, i) => [`attachments[${i}]`, "x", `${i}.txt`] as [string, string, string]));
    t.equal(tooMany.status, 422);
    t.ok(tooMany.body.errors.attachments);
    const notFile = await form(owner.token, `/api/support-tickets/${ticketId}/replies`, { body: "text", "attachments[0]": "not a file" }, []);
    t.equal(notFile.status, 422);
    const emptyBody = await form(owner.token, "/api/support-tickets", { subject: "", body: "" }, [["attachments[0]", "x", "x.txt"]]);
    t.equal(emptyBody.status, 422);
    await client(app.url, owner.token).post(`/api/support-tickets/${ticketId}/close`);
    const closed = await form(owner.token, `/api/support-tickets/${ticketId}/replies`, { body: "late" }, [["attachments[0]", "x", "x.txt"]]);
    t.equal(closed.status, 409);
    t.same(await stored(), before, "no row and no file left behind");
  });
});
