/**
 * A body refused part-way (over its limit while it was being read) must not stall its
 * keep-alive connection: the rest is read and discarded, as Node does for a body nobody read,
 * so the client can finish sending and its next request on the same connection is answered.
 * Found by fuzzing: a 300 KB token request answered 413, and a later request that reused the
 * connection waited until the client gave up. Every request here goes over one keep-alive
 * socket (an agent with `maxSockets: 1`), sent with a declared length and chunked.
 */
import http from "node:http";
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";

interface Answer {
  status: number;
  body: string;
}

/** Sends `body` in 64 KiB writes, chunked unless `declareLength`; fails after `ms` without an answer. */
function send(agent: http.Agent, url: string, headers: Record<string, string>, body: Buffer, declareLength: boolean, ms = 10_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: declareLength ? { ...headers, "content-length": String(body.length) } : headers });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString("utf8") });
      });
    });
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
    req.end();
  });
}

t.test("a body refused part-way leaves its keep-alive connection answering the next requests", async (t) => {
  const app = await startTestApp(t, { env: { BODY_LIMIT_BYTES: "65536", UPLOAD_LIMIT_BYTES: "65536" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  const json = { "content-type": "application/json" };
  // Several times the limits and more than loopback's socket buffers hold, so the client
  // cannot finish sending unless the server reads on.
  const huge = (field: string) => Buffer.from(JSON.stringify({ [field]: "x".repeat(8 * 1024 * 1024) }));
  const boundary = "sf-refused-body";
  const multipart = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.zip"\r\ncontent-type: application/zip\r\n\r\n`),
    Buffer.alloc(8 * 1024 * 1024, 0x61),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);

  const routes = [
    { name: "a JSON route", path: "/api/projects", headers: { ...json, authorization: `Bearer ${token}` }, big: huge("name"), small: Buffer.from("{}"), after: 422 },
    {
      name: "the OAuth token endpoint",
      path: "/api/oauth/token",
      headers: json,
      big: huge("password"),
      small: Buffer.from('{"grant_type":"password","client_id":"nobody","client_secret":"x","username":"u","password":"p"}'),
      after: 400,
    },
    {
      name: "a multipart upload",
      path: `/api/projects/${project}/templates/import`,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${token}` },
      big: multipart,
      small: Buffer.from(`--${boundary}--\r\n`),
      after: 422,
    },
  ];
  for (const route of routes) {
    for (const declareLength of [false, true]) {
      const how = `${route.name}, ${declareLength ? "declared length" : "chunked"}`;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      t.teardown(() => agent.destroy());
      const url = `${app.url}${route.path}`;
      const refused = await send(agent, url, route.headers, route.big, declareLength);
      t.equal(refused.status, 413, `${how}: refused as too large`);
      t.match(JSON.parse(refused.body), { code: "payload_too_large" });
      for (let i = 0; i < 3; i += 1) {
        const next = await send(agent, url, route.headers, route.small, true).catch((error: unknown) => ({ status: 0, body: String(error) }));
        t.equal(next.status, route.after, `${how}: request ${i + 1} after it is answered (${next.body.slice(0, 120)})`);
      }
    }
  }
  t.equal((await fetch(`${app.url}/api/health`)).status, 200, "the service is healthy");
});
