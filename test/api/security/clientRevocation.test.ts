/**
 * Security review finding 13 (first part): revoking an OAuth client ends its unexpired
 * tokens in every web process, not at their next restart.
 */
import t from "tap";
import { z } from "zod";
import { createClient } from "../../../shared/auth/clients.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { request } from "../../support/http.ts";

/** Polls `check` until it holds; the ceiling only guards against hanging. */
async function eventually(check: () => Promise<boolean>, guardMs = 15_000): Promise<boolean> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > guardMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

t.test("a revoked client's tokens stop working in every process", async (t) => {
  const first = await startTestApp(t);
  const second = await startTestApp(t, { db: first.db });
  const password = "client revocation";
  const user = await buildUser(first.pool, { passwordHash: await hashPassword(password) });
  const partner = await createClient(first.pool, first.config, { name: "Partner integration" });
  const token = async (app: typeof first) => {
    const res = await request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: partner.clientId, client_secret: partner.clientSecret, username: user.email, password, scope: "*" },
    });
    t.equal(res.status, 200, res.text);
    return res.body.access_token as string;
  };
  // Each process is its own issuer here (its URL), so each checks the token it issued.
  const issued = [[first, await token(first)], [second, await token(second)]] as const;
  const status = async (app: typeof first, bearer: string) => (await request(app.url, "GET", "/api/user", { token: bearer })).status;
  for (const [app, bearer] of issued) t.equal(await status(app, bearer), 200, "the client is known and cached");

  await first.pool.query(sql.type(z.object({}))`update oauth_clients set revoked_at = now() where client_id = ${partner.clientId}`);
  for (const [app, bearer] of issued) {
    t.ok(await eventually(async () => (await status(app, bearer)) === 401), `${app === first ? "the first" : "the second"} process refuses the revoked client's token`);
  }
});
