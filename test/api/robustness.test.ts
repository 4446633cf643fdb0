import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { testRoutes } from "../support/testRoutes.ts";

/** Sends raw bytes over TCP and returns the raw HTTP response. */
function rawHttp(port: number, payload: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(payload));
    let out = "";
    socket.on("data", (d) => (out += d.toString()));
    socket.on("end", () => resolve(out));
    socket.on("error", reject);
  });
}

t.test("malformed and oversized requests get 4xx JSON and leave the server healthy", async (t) => {
  const app = await startTestApp(t, { extraRoutes: testRoutes });
  const { token } = await buildUserWithToken(app.pool);
  const path = "/api/broadcasting/auth";
  const json = { "content-type": "application/json" };
  const nested = "[".repeat(5000) + "]".repeat(5000);
  const cases: { name: string; body: string | Buffer; headers: Record<string, string> }[] = [
    { name: "truncated JSON", body: '{"socket_id": "1.2", "channel_na', headers: json },
    { name: "not JSON at all", body: "hello world", headers: json },
    { name: "trailing garbage", body: '{"a":1}}}', headers: json },
    { name: "JSON scalar", body: '"just a string"', headers: json },
    { name: "JSON array", body: "[1,2,3]", headers: json },
    { name: "deep nesting", body: nested, headers: json },
    { name: "null bytes", body: '{"socket_id":"1\u0000.2","channel_name":"private-job.1"}', headers: json },
    { name: "invalid UTF-8", body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), headers: json },
    { name: "oversized JSON", body: JSON.stringify({ socket_id: "1.2", channel_name: "x".repeat(2 * 1024 * 1024) }), headers: json },
    { name: "wrong content type", body: "<xml/>", headers: { "content-type": "application/xml" } },
    { name: "multipart to a JSON route", body: "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n", headers: { "content-type": "multipart/form-data; boundary=b" } },
    { name: "broken form encoding", body: "socket_id=%E0%A4%A&channel_name=%", headers: { "content-type": "application/x-www-form-urlencoded" } },
    { name: "huge numbers and wrong types", body: '{"socket_id": 1e400, "channel_name": {"$ne": 1}}', headers: json },
    { name: "prototype pollution attempt", body: '{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}}', headers: json },
    { name: "empty body with JSON type", body: "", headers: json },
  ];
  let sent = 0;
  for (let round = 0; sent < 200; round += 1) {
    for (const c of cases) {
      if (sent >= 200) break;
      const res = await request(app.url, "POST", path, { token, raw: true, body: c.body, headers: c.headers });
      sent += 1;
      if (round === 0) {
        t.ok(res.status >= 400 && res.status < 500, `${c.name}: 4xx (got ${res.status})`);
        t.ok(typeof res.body?.message === "string" && typeof res.body?.code === "string", `${c.name}: JSON {message, code}`);
        t.notMatch(res.text, /at .*\.ts:\d+|node_modules|Error:/, `${c.name}: no stack trace`);
      } else if (res.status < 400 || res.status >= 500 || !res.body?.code) {
        t.fail(`${c.name} (round ${round}): ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
  }
  t.equal(sent, 200);

  const tooLarge = await request(app.url, "POST", path, { token, raw: true, body: "x".repeat(2 * 1024 * 1024), headers: json });
  t.equal(tooLarge.status, 413);
  t.equal(tooLarge.body.code, "payload_too_large");
  const validation = await request(app.url, "POST", path, { token, body: { socket_id: 5 } });
  t.equal(validation.status, 422);
  t.same(Object.keys(validation.body.errors).sort(), ["channel_name", "socket_id"]);
  t.same(validation.body.errors.channel_name, ["The channel name field is required."]);

  const broken = await rawHttp(app.web.port, "GARBAGE / HTTP/9.9\r\n\r\n");
  t.match(broken, /^HTTP\/1\.1 400/);
  t.match(broken, /"code":"bad_request"/);
  const bigHeaders = await rawHttp(app.web.port, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(64 * 1024)}\r\n\r\n`);
  t.match(bigHeaders, /^HTTP\/1\.1 431/);

  const health = await request(app.url, "GET", "/api/health");
  t.equal(health.status, 200, "still healthy");
  t.equal(health.body.database.ok, true);
});

/** One part of a hand-made multipart body. */
interface Part {
  name: string;
  value: string | Buffer;
  /** Makes it a file part. */
  filename?: string;
}

/** A multipart body made by hand, so that broken ones can be made too. */
function multipart(parts: Part[], boundary = "sf-boundary-1234"): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
    const type = part.filename === undefined ? "" : "Content-Type: application/octet-stream\r\n";
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(part.value), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** Sends `body` with exact control over framing: a Content-Length, or chunked. */
function send(url: string, path: string, body: Buffer, headers: Record<string, string>, options: { chunked?: boolean } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      method: "POST",
      headers: { accept: "application/json", ...(options.chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) }), ...headers },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
    });
    // The server may answer (413) and close before it has read everything we send.
    req.on("error", (error: NodeJS.ErrnoException) => (error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error)));
    if (options.chunked) {
      for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.subarray(i, i + 16 * 1024));
      req.end();
    } else req.end(body);
  });
}

t.test("malformed, oversized and mistyped multipart bodies get 4xx JSON; uploads never outlive their request", async (t) => {
  // Uploads land in the system temp folder; point it at an empty one of this test's own.
  const tmp = await mkdtemp(path.join(os.tmpdir(), "sf-robustness-"));
  const previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  t.teardown(async () => {
    if (previousTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmp;
    await rm(tmp, { recursive: true, force: true });
  });
  const uploadLimit = 64 * 1024;
  const app = await startTestApp(t, {
    extraRoutes: testRoutes,
    env: { UPLOAD_LIMIT_BYTES: String(uploadLimit), BODY_LIMIT_BYTES: "16384", DEPLOYMENT_UPLOAD_MAX_FILES: "5" },
  });
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  const auth = { authorization: `Bearer ${token}` };
  const counts = sql.type(z.object({ jobs: z.number(), templates: z.number(), projects: z.number() }))`
    select (select count(*)::int from jobs) as jobs, (select count(*)::int from templates) as templates,
      (select count(*)::int from projects) as projects`;
  const before = await app.pool.one(counts);

  const routes = {
    upload: "/api/deployments/upload",
    templateImport: `/api/projects/${project}/templates/import`,
    projectImport: "/api/projects/import",
    projectValidate: "/api/projects/import/validate",
  };
  const type = (boundary = "sf-boundary-1234") => ({ "content-type": `multipart/form-data; boundary=${boundary}` });
  const tiny = (i: number): Part => ({ name: "files[]", filename: `f${i}.txt`, value: "x" });
  const manyFields = Array.from({ length: 1001 }, (_, i): Part => ({ name: `f${i}`, value: "1" }));
  interface Case {
    name: string;
    body: Buffer;
    headers?: Record<string, string>;
    chunked?: boolean;
    status: number;
    code: string;
    message?: RegExp;
    field?: string;
  }
  const everyRoute: Case[] = [
    { name: "a file over the upload limit", body: multipart([{ name: "file", filename: "big.zip", value: Buffer.alloc(uploadLimit + 1, 1) }]), status: 413, code: "payload_too_large", message: new RegExp(`${uploadLimit} bytes`) },
    { name: "files together over the upload limit", body: multipart([0, 1, 2].map((i) => ({ name: "files[]", filename: `p${i}.bin`, value: Buffer.alloc(30 * 1024, 2) }))), status: 413, code: "payload_too_large", message: new RegExp(`${uploadLimit} bytes`) },
    { name: "too many files", body: multipart([0, 1, 2, 3, 4, 5].map(tiny)), status: 413, code: "payload_too_large", message: /at most 5 files/ },
    { name: "too many fields", body: multipart(manyFields), status: 413, code: "payload_too_large", message: /at most 1000 fields/ },
    { name: "text fields over the body limit", body: multipart([{ name: "deployment_method", value: "f".repeat(20 * 1024) }]), status: 413, code: "payload_too_large", message: /16384 bytes/ },
    { name: "an oversized chunked upload", body: multipart([{ name: "file", filename: "big.zip", value: Buffer.alloc(uploadLimit * 2, 3) }]), chunked: true, status: 413, code: "payload_too_large" },
    { name: "no boundary", body: multipart([{ name: "a", value: "1" }]), headers: { "content-type": "multipart/form-data" }, status: 400, code: "malformed_body" },
    { name: "a truncated body", body: multipart([{ name: "file", filename: "a.zip", value: "PK\u0003\u0004abc" }]).subarray(0, 90), status: 400, code: "malformed_body" },
    { name: "a boundary the body does not use", body: multipart([{ name: "a", value: "1" }], "other-boundary"), status: 400, code: "malformed_body" },
    { name: "garbage under a multipart type", body: Buffer.from("this is not multipart at all"), status: 400, code: "malformed_body" },
    {
      name: "a part in an unknown transfer encoding",
      body: Buffer.from('--sf-boundary-1234\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nabc=3D\r\n--sf-boundary-1234--\r\n'),
      status: 400,
      code: "malformed_body",
      message: /Content-Transfer-Encoding/,
    },
  ];
  const perRoute: [string, Case][] = [
    ["upload", { name: "a file where text is expected", body: multipart([{ name: "deployment_method", filename: "m.txt", value: "ftp" }]), status: 422, code: "validation_failed", field: "deployment_method" }],
    ["upload", { name: "a NUL in a text field", body: multipart([{ name: "deployment_method", value: "ftp\u0000" }]), status: 422, code: "validation_failed" }],
    ["upload", { name: "a field named __proto__", body: multipart([{ name: "__proto__", value: "x" }, { name: "constructor", value: "y" }]), status: 422, code: "validation_failed", field: "deployment_method" }],
    [
      "upload",
      {
        name: "text where the archive file is expected",
        body: multipart([
          ...Object.entries({ deployment_method: "ssh", ssh_host: "127.0.0.1", ssh_port: "22", ssh_username: "deploy", ssh_auth_method: "password", ssh_password: "secret-password", ssh_path: "/srv/app" }).map(([name, value]) => ({ name, value })),
          { name: "archive", value: "not a file" },
        ]),
        status: 422,
        code: "validation_failed",
        field: "archive",
      },
    ],
    [
      "upload",
      {
        name: "a browser's empty \"no file chosen\" part",
        body: multipart([
          ...Object.entries({ deployment_method: "ftp", ftp_host: "127.0.0.1", ftp_port: "21", ftp_username: "deploy", ftp_password: "secret-password", ftp_path: "/srv" }).map(([name, value]) => ({ name, value })),
          { name: "files[0]", filename: "", value: "" },
        ]),
        status: 422,
        code: "validation_failed",
        field: "files",
      },
    ],
    ["templateImport", { name: "text where the zip is expected", body: multipart([{ name: "file", value: "PK not really" }]), status: 422, code: "validation_failed", field: "file" }],
    ["templateImport", { name: "an empty file", body: multipart([{ name: "file", filename: "empty.zip", value: "" }]), status: 422, code: "" }],
    ["templateImport", { name: "two files in the one-file field", body: multipart([0, 1].map((i) => ({ name: "file", filename: `t${i}.zip`, value: "zip" }))), status: 422, code: "validation_failed", field: "file" }],
    ["templateImport", { name: "a file that is not a zip", body: multipart([{ name: "file", filename: "t.zip", value: "just text" }]), status: 422, code: "" }],
    ["projectImport", { name: "a bundle file that is not JSON", body: multipart([{ name: "bundle", filename: "b.json", value: "{not json" }]), status: 422, code: "validation_failed", field: "bundle" }],
    ["projectImport", { name: "a bundle file that is not a bundle", body: multipart([{ name: "bundle", filename: "b.json", value: "[1, 2]" }]), status: 422, code: "validation_failed" }],
    ["projectValidate", { name: "an empty bundle file", body: multipart([{ name: "bundle", filename: "b.json", value: "" }]), status: 422, code: "validation_failed", field: "bundle" }],
    ["projectImport", { name: "part headers that never end", body: Buffer.from(`--sf-boundary-1234\r\nContent-Disposition: form-data; name="bundle"${"x".repeat(200)}`), status: 400, code: "malformed_body" }],
  ];
  const all: [string, Case][] = [...Object.keys(routes).flatMap((route) => everyRoute.map((c): [string, Case] => [route, c])), ...perRoute];
  t.ok(all.length >= 50, `${all.length} requests`);

  for (const [route, c] of all) {
    const res = await send(app.url, routes[route as keyof typeof routes], c.body, { ...auth, ...(c.headers ?? type()) }, { chunked: c.chunked ?? false });
    const label = `${route}, ${c.name}`;
    t.ok(res.status >= 400 && res.status < 500, `${label}: 4xx (got ${res.status} ${res.text.slice(0, 160)})`);
    t.equal(res.status, c.status, `${label}: ${c.status}`);
    t.match(res.headers["content-type"], /application\/json/, `${label}: JSON`);
    t.ok(typeof res.body?.message === "string" && typeof res.body?.code === "string", `${label}: {message, code}`);
    if (c.code) t.equal(res.body?.code, c.code, `${label}: code ${c.code}`);
    if (c.message) t.match(res.body?.message, c.message, `${label}: names the limit`);
    if (c.field) t.ok(res.body?.errors?.[c.field], `${label}: error on ${c.field}`);
    t.notMatch(res.text, /at .*\.ts:\d+|node_modules|Error:|\/tmp|sf-robustness/, `${label}: no internals`);
  }

  // A client that goes away halfway through its upload.
  await new Promise<void>((resolve) => {
    const socket = net.connect(app.web.port, "127.0.0.1", () => {
      const head = `POST ${routes.upload} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=sf-boundary-1234\r\nContent-Length: 100000\r\n\r\n`;
      socket.write(head + `--sf-boundary-1234\r\nContent-Disposition: form-data; name="files[]"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${"y".repeat(5000)}`);
      setTimeout(() => socket.destroy(), 200);
    });
    socket.on("close", () => resolve());
    socket.on("error", () => undefined);
  });

  // Success and failure after the upload was read: the file existed during the request, not after.
  const form = (fail: boolean) =>
    multipart([{ name: "file", filename: "note.txt", value: "hello upload" }, ...(fail ? [{ name: "fail", value: "1" }] : [])]);
  const ok = await send(app.url, "/api/test/upload", form(false), { ...auth, ...type() });
  t.equal(ok.status, 200, ok.text);
  t.equal(ok.body.size, 12);
  t.ok(ok.body.path.startsWith(`${tmp}${path.sep}`), "uploads land in the system temp folder");
  t.notOk(existsSync(ok.body.path), "removed once the request succeeded");
  const failed = await send(app.url, "/api/test/upload", form(true), { ...auth, ...type() });
  t.equal(failed.status, 409);
  const wrongField = await send(app.url, "/api/test/upload", multipart([{ name: "file", filename: "n.txt", value: "x" }, { name: "fail", filename: "f.txt", value: "1" }]), { ...auth, ...type() });
  t.equal(wrongField.status, 422, "a file where the text field fail is expected");

  // Every request is over; its upload folder must be gone (the aborted one may take a moment).
  let left: string[] = [];
  for (let i = 0; i < 40; i += 1) {
    left = await readdir(tmp);
    if (left.length === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(left, [], "no upload left in the temp folder");
  t.same(await app.pool.one(counts), before, "nothing written: no job, template or project");
  const health = await request(app.url, "GET", "/api/health");
  t.equal(health.status, 200, "still healthy");
  t.equal(health.body.database.ok, true);
});
