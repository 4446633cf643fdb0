/**
 * Part headers of multipart bodies are bounded: one part's at PART_HEADER_BYTES, all parts'
 * together at a budget. Before, formidable read a part's headers at any length and matched a
 * regular expression over the Content-Disposition line whose cost grows with the square of
 * its length, so one upload of half a megabyte of `filename="x"` held the event loop for
 * many seconds (every other request of the process waiting), and a padded header line was
 * kept in memory however long it was.
 */
import t from "tap";
import { z } from "zod";
import { bodyHeaderBytes, PART_HEADER_BYTES } from "../../../api/middleware/partHeaders.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";

const BOUNDARY = "sf-part-headers";

/** A hand-made multipart body: each part its raw header lines and content. */
function multipart(parts: { headers: string[]; value: string }[]): Buffer {
  const text = parts.map((p) => `--${BOUNDARY}\r\n${p.headers.join("\r\n")}\r\n\r\n${p.value}\r\n`).join("") + `--${BOUNDARY}--\r\n`;
  return Buffer.from(text);
}

t.test("oversized part headers are refused with 413 before they are parsed; ordinary ones pass", async (t) => {
  const files = 5;
  const app = await startTestApp(t, { env: { DEPLOYMENT_UPLOAD_MAX_FILES: String(files) } });
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const project = (await api.post("/api/projects", { name: "Headers" })).body.project;
  const message = (await api.post("/api/messages/threads", { subject: "Headers", project_id: project.id, body: "here" })).body.thread.messages[0];
  const send = (body: Buffer) =>
    request(app.url, "POST", `/api/messages/${message.id}/attachments`, {
      token: owner.token,
      body,
      raw: true,
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
  const filePart = (disposition: string, extra: string[] = []) => ({ headers: [`Content-Disposition: ${disposition}`, "Content-Type: text/plain", ...extra], value: "hello" });

  const padded = await send(multipart([filePart(`form-data; name="file"; filename="a.txt"`, [`X-Pad: ${"a".repeat(64 * 1024)}`])]));
  t.equal(padded.status, 413, padded.text.slice(0, 200));
  t.match(padded.body, { code: "payload_too_large", message: new RegExp(`${PART_HEADER_BYTES} bytes of headers per part`) });

  // Half a megabyte shaped for the quadratic match: many seconds of one CPU before.
  const started = Date.now();
  const quadratic = await send(multipart([filePart(`form-data; name="file"; ${'filename="x"'.repeat(40_000)}z`)]));
  const took = Date.now() - started;
  t.equal(quadratic.status, 413, quadratic.text.slice(0, 200));
  t.equal(quadratic.body?.code, "payload_too_large");
  t.ok(took < 5000, `answered in ${took} ms`);

  // Each part under its own bound, all of them together over the body's.
  const budget = bodyHeaderBytes(files);
  const each = PART_HEADER_BYTES - 1024;
  const many = Array.from({ length: Math.ceil(budget / each) + 1 }, (_, i) => ({ headers: [`Content-Disposition: form-data; name="f${i}"`, `X-Pad: ${"b".repeat(each - 40)}`], value: "1" }));
  const spread = await send(multipart(many));
  t.equal(spread.status, 413, spread.text.slice(0, 200));
  t.match(spread.body, { code: "payload_too_large", message: new RegExp(`at most ${budget} bytes of part headers`) });

  const count = sql.type(z.object({ n: z.number() }))`select count(*)::int as n from attachments where message_id = ${message.id}`;
  t.equal(await app.pool.oneFirst(count), 0, "nothing was attached");

  // A long (255 characters) non-ASCII name is an ordinary header and still goes through.
  const name = `${"ü".repeat(251)}.txt`;
  const form = new FormData();
  form.append("file", new Blob(["hello"]), name);
  const ok = await request(app.url, "POST", `/api/messages/${message.id}/attachments`, { token: owner.token, body: form, raw: true });
  t.equal(ok.status, 201, ok.text.slice(0, 200));
  t.equal(ok.body.attachment.file_name, name);
  const health = await request(app.url, "GET", "/api/health");
  t.equal(health.status, 200, "the process still serves");
});
