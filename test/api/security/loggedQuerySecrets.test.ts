/**
 * The access log does not keep credentials that travel in a query string: a git sign-in
 * callback's authorization `code` and `state`, a signed attachment link's `signature`. The
 * rest of the URL stays, so a line still says what was asked.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("query-string credentials are masked in the access log", async (t) => {
  const lines: string[] = [];
  const app = await startTestApp(t, { logLines: lines });
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const code = "Code-4f0c1e9a7b2d";
  const state = "State-88a1c0ffee";
  const signature = "5ac1d3b9e0f7a2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1";

  await api.get(`/api/git/github/callback?code=${code}&state=${state}`);
  await api.get(`/api/attachments/1/download?expires=4102444800&signature=${signature}`);
  await api.get(`/api/git/github/callback?%63ode=${code}`);

  const access = lines.filter((line) => line.includes('"msg":"request"'));
  t.ok(access.some((line) => line.includes("/api/git/github/callback?code=[redacted]&state=[redacted]")), "the callback line, masked");
  t.ok(access.some((line) => line.includes("/api/attachments/1/download?expires=4102444800&signature=[redacted]")), "the download line, masked");
  for (const secret of [code, state, signature]) t.same(lines.filter((line) => line.includes(secret)), [], `${secret.slice(0, 10)}… in no log line`);
});
