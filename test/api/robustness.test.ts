import net from "node:net";
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
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
