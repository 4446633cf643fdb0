/**
 * Byte ranges of stored downloads (a generation's zip, a message attachment): a cut-off
 * download resumes with `Range` (206 and `Content-Range`, across the storage's 1 MiB chunks),
 * `If-Range` sends the whole file again once it was replaced, a range past the end is 416 with
 * the size, and anything but one well-formed byte range gets the whole file.
 */
import { randomBytes } from "node:crypto";
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { recordGeneration } from "../../shared/generations/record.ts";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { until } from "../support/wait.ts";

const MiB = 1024 * 1024;

t.test("byte ranges of stored downloads", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  // Random text deflates to about three quarters: a zip of some 2.6 MB, three stored chunks.
  const id = await recordGeneration(app.pool, {
    projectId: project,
    userId: user.id,
    templateId: null,
    generatorId: null,
    schemaId: null,
    values: {},
    files: { "a.txt": randomBytes(2_600_000).toString("base64"), "b.txt": "hello" },
    jobId: null,
  });
  await until(async () => (await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from project_archives where code_generation_id = ${id}`)) === "ready", {
    message: "the archive to be built",
  });
  const url = `${app.url}/api/archives/${id}/download`;
  const get = async (headers: Record<string, string> = {}) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers } });
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  const { res: full, bytes: zip } = await get();
  t.equal(full.status, 200);
  t.ok(zip.length > 2 * MiB, `a zip of ${zip.length} bytes spans three chunks`);
  t.equal(full.headers.get("content-length"), String(zip.length));
  t.equal(full.headers.get("accept-ranges"), "bytes");
  const etag = full.headers.get("etag")!;
  t.match(etag, /^"[^"]+"$/, "a strong entity tag");
  const lastModified = full.headers.get("last-modified")!;
  t.ok(lastModified, "and the date of the file");

  t.test("one range, anywhere in the file", async (t) => {
    const cases: [string, number, number][] = [
      ["bytes=0-99", 0, 99],
      ["bytes=1048500-1048700", 1048500, 1048700], // across the first chunk boundary
      [`bytes=${MiB}-${2 * MiB}`, MiB, 2 * MiB], // a whole chunk and the first byte of the next
      ["bytes=1500000-", 1500000, zip.length - 1], // from the second chunk to the end
      ["bytes=-500", zip.length - 500, zip.length - 1], // the last 500
      [`bytes=-${zip.length + 10}`, 0, zip.length - 1], // a suffix longer than the file
      ["bytes=10-99999999", 10, zip.length - 1], // an end past the file's
      [`bytes=${zip.length - 1}-${zip.length - 1}`, zip.length - 1, zip.length - 1],
      ["BYTES = 5 - 9", 5, 9],
    ];
    for (const [range, start, end] of cases) {
      const { res, bytes } = await get({ range });
      t.equal(res.status, 206, range);
      t.equal(res.headers.get("content-range"), `bytes ${start}-${end}/${zip.length}`, range);
      t.equal(res.headers.get("content-length"), String(end - start + 1), range);
      t.ok(bytes.equals(zip.subarray(start, end + 1)), `${range}: the same bytes as the whole file's`);
      t.equal(res.headers.get("etag"), etag);
    }
  });

  t.test("a cut-off download resumes to the same file", async (t) => {
    const head = (await get({ range: "bytes=0-1234566" })).bytes;
    const { res, bytes: tail } = await get({ range: `bytes=${head.length}-`, "if-range": etag });
    t.equal(res.status, 206);
    t.ok(Buffer.concat([head, tail]).equals(zip));
    const byDate = await get({ range: "bytes=0-9", "if-range": lastModified });
    t.equal(byDate.res.status, 206, "If-Range with the file's date");
  });

  t.test("past the end: 416 with the size", async (t) => {
    for (const range of [`bytes=${zip.length}-`, `bytes=${zip.length + 100}-${zip.length + 200}`, "bytes=-0"]) {
      const res = await request(app.url, "GET", `/api/archives/${id}/download`, { token, headers: { range } });
      t.equal(res.status, 416, range);
      t.equal(res.headers.get("content-range"), `bytes */${zip.length}`);
      t.match(res.body, { code: "range_not_satisfiable", message: `The requested range is not within the file's ${zip.length} bytes.` });
    }
  });

  t.test("anything but one well-formed byte range gets the whole file", async (t) => {
    for (const range of ["bytes=0-1,5-9", "bytes=abc", "items=0-5", "bytes=9-5", "bytes=-", `bytes=0-${"9".repeat(200)}`, "bytes=99999999999999999999-"]) {
      const { res, bytes } = await get({ range });
      t.equal(res.status, 200, range);
      t.ok(bytes.equals(zip), `${range}: the whole zip`);
    }
    for (const ifRange of ['"not-it"', `W/${etag}`, "Mon, 01 Jan 2001 00:00:00 GMT", "yesterday"]) {
      const { res, bytes } = await get({ range: "bytes=0-9", "if-range": ifRange });
      t.equal(res.status, 200, `If-Range ${ifRange}: the whole file`);
      t.equal(bytes.length, zip.length);
    }
  });

  t.test("HEAD tells the length and the validators without a body", async (t) => {
    const res = await fetch(url, { method: "HEAD", headers: { authorization: `Bearer ${token}` } });
    t.equal(res.status, 200);
    t.equal(res.headers.get("content-length"), String(zip.length));
    t.equal(res.headers.get("etag"), etag);
    t.equal((await res.arrayBuffer()).byteLength, 0);
  });

  t.test("a file replaced meanwhile: If-Range sends the whole new one", async (t) => {
    const key = await app.pool.oneFirst(sql.type(z.object({ file_path: z.string() }))`select file_path from project_archives where code_generation_id = ${id}`);
    const replacement = randomBytes(3000);
    await new PostgresStorage(app.pool).put(key, replacement, { contentType: "application/zip" });
    const { res, bytes } = await get({ range: "bytes=1000-", "if-range": etag });
    t.equal(res.status, 200, "the old tag no longer names the file");
    t.ok(bytes.equals(replacement));
    t.not(res.headers.get("etag"), etag, "a new tag for the new file");
    const ranged = await get({ range: "bytes=1000-", "if-range": res.headers.get("etag")! });
    t.equal(ranged.res.status, 206);
    t.ok(ranged.bytes.equals(replacement.subarray(1000)));
  });

  t.test("attachments resume too", async (t) => {
    const member = await buildUserWithToken(app.pool);
    await buildTeam(app.pool, user.id, { [member.user.id]: 3 }, [project]);
    const api = client(app.url, token);
    const thread = (await api.post("/api/messages/threads", { subject: "Files", project_id: project, body: "here" })).body.thread;
    const message = (await client(app.url, member.token).post(`/api/messages/threads/${thread.id}`, { body: "see file" })).body.message_data;
    const content = randomBytes(1_500_000);
    const form = new FormData();
    form.append("file", new Blob([content]), "data.bin");
    const uploaded = await request(app.url, "POST", `/api/messages/${message.id}/attachments`, { token: member.token, body: form, raw: true });
    t.equal(uploaded.status, 201, uploaded.text);
    const link = new URL(uploaded.body.attachment.download_url);
    const path = `${app.url}${link.pathname}${link.search}`;
    const whole = await fetch(path);
    t.equal(whole.status, 200);
    t.equal(whole.headers.get("accept-ranges"), "bytes");
    t.ok(Buffer.from(await whole.arrayBuffer()).equals(content));
    const part = await fetch(path, { headers: { range: "bytes=1048570-1048589" } });
    t.equal(part.status, 206);
    t.equal(part.headers.get("content-range"), `bytes 1048570-1048589/${content.length}`);
    t.ok(Buffer.from(await part.arrayBuffer()).equals(content.subarray(1048570, 1048590)));
    const past = await fetch(path, { headers: { range: `bytes=${content.length}-` } });
    t.equal(past.status, 416);
    t.equal(past.headers.get("content-range"), `bytes */${content.length}`);
  });
});
