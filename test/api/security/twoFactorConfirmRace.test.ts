/**
 * Two confirmations of one two-factor enrollment at the same moment, each with another valid
 * code (two neighbouring time steps): one turns two-factor on and answers the recovery codes,
 * the other answers 409 `two_factor_enabled`. Before, both answered ten recovery codes and only
 * the later set worked. The test holds the user's row (as an update would) until both
 * requests wait for it, so the race is the test's and not the scheduler's.
 */
import t from "tap";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { holdLocks, untilWaitingOnLocks } from "../../support/lockWaits.ts";

const STEP_MS = 30_000;
const codeFor = (secret: string, step: number) => new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate({ timestamp: step * STEP_MS });

t.test("two confirmations at once: one enables, the other is refused", async (t) => {
  const app = await startTestApp(t);
  const api = client(app.url);
  const password = "confirm me once";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const me = client(app.url, (await api.post("/api/auth/login", { email: user.email, password })).body.access_token);
  const secret: string = (await me.post("/api/auth/2fa/enable", { current_password: password })).body.secret;
  const step = Math.floor(Date.now() / STEP_MS);

  // Hold the row as an update does (FOR NO KEY UPDATE lets the password re-check's foreign keys pass).
  const lock = await holdLocks(t, app.db.url, (tx) => tx.query(sql.type(z.object({}))`select 1 from users where id = ${user.id} for no key update`));
  const confirms = [step, step + 1].map((s) => me.post("/api/auth/2fa/confirm", { code: codeFor(secret, s), current_password: password }));
  await untilWaitingOnLocks(app.pool, 2, "both confirmations to wait for the user's row");
  lock.release();
  await lock.done;
  const answers = await Promise.all(confirms);

  t.same(answers.map((a) => a.status).sort(), [200, 409], answers.map((a) => a.text).join("\n"));
  const won = answers.find((a) => a.status === 200)!;
  const lost = answers.find((a) => a.status === 409)!;
  t.same(lost.body, { message: "Two-factor authentication is already enabled.", code: "two_factor_enabled" });
  const stored = await app.pool.one(sql.type(z.object({ secret: z.boolean(), codes: z.number() }))`
    select two_factor_secret is not null as secret, (select count(*)::int from two_factor_recovery_codes where user_id = ${user.id}) as codes
    from users where id = ${user.id}`);
  t.same(stored, { secret: true, codes: 10 }, "the secret is kept with one set of codes");

  const challenge = (await api.post("/api/auth/login", { email: user.email, password })).body;
  t.equal(challenge.two_factor_required, true);
  const signedIn = await api.post("/api/auth/login-2fa", { two_factor_token: challenge.two_factor_token, code: won.body.recovery_codes[0] });
  t.equal(signedIn.status, 200, `the answered recovery codes work: ${signedIn.text}`);
});
