/**
 * A sign-in with the old password racing a password change keeps nothing that works. The
 * change revoked tokens issued before its transaction began, while a login that read the old
 * password before the change committed minted its token later, so the token outlived the
 * password it was got with. The test holds the user's row (as an update would) until the
 * change waits for it, then signs in with the old password through `/auth/login` and the
 * password grant, so the race is the test's and not the scheduler's. A two-factor challenge
 * handed out before a password change no longer finishes a login either.
 */
import t from "tap";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { holdLocks, untilWaitingOnLocks } from "../../support/lockWaits.ts";

const CLIENT_ID = "test-client";
const CLIENT_SECRET = "test-client-secret-0123456789";
const OLD = "the old password";
const NEW = "the brand new password";

t.test("signing in with a password being changed", async (t) => {
  const app = await startTestApp(t);
  const api = client(app.url);
  const passwordHash = await hashPassword(OLD);

  t.test("a login and a password grant racing the change keep no working token", async (t) => {
    const user = await buildUser(app.pool, { passwordHash });
    const me = client(app.url, (await api.post("/api/auth/login", { email: user.email, password: OLD })).body.access_token);

    const lock = await holdLocks(t, app.db.url, (tx) => tx.query(sql.type(z.object({}))`select 1 from users where id = ${user.id} for no key update`));
    const change = me.put("/api/profile/password", { current_password: OLD, password: NEW, password_confirmation: NEW });
    await untilWaitingOnLocks(app.pool, 1, "the password change to wait for the user's row");
    const login = api.post("/api/auth/login", { email: user.email, password: OLD });
    const grant = request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, username: user.email, password: OLD, scope: "*" },
    });
    // Either both sign-ins finish while the change waits (as they did), or they wait for the row as well.
    const blocked = untilWaitingOnLocks(app.pool, 3, "the sign-ins to wait for the user's row").then(
      () => true,
      () => false,
    );
    await Promise.race([Promise.all([login, grant]), blocked]);
    lock.release();
    await lock.done;
    const changed = await change;
    t.equal(changed.status, 200, changed.text);

    /** Whether a sign-in's answer holds an access token that still works after the change. */
    const works = async (res: { status: number; body: { access_token?: string } }) =>
      res.status === 200 && typeof res.body.access_token === "string" && (await client(app.url, res.body.access_token).get("/api/user")).status === 200;
    const [byLogin, byGrant] = await Promise.all([login, grant]);
    t.notOk(await works(byLogin), `the login with the old password keeps no working token (${byLogin.status})`);
    t.notOk(await works(byGrant), `nor the password grant (${byGrant.status})`);
    if (byLogin.status !== 200) t.same(byLogin.body.errors, { email: ["These credentials do not match our records."] });
    t.equal((await api.post("/api/auth/login", { email: user.email, password: NEW })).status, 200, "the new password signs in");
    t.equal((await client(app.url, changed.body.access_token).get("/api/user")).status, 200, "the changer's fresh token works");
  });

  t.test("a two-factor challenge from before a password change signs nobody in", async (t) => {
    const user = await buildUser(app.pool, { passwordHash });
    const me = client(app.url, (await api.post("/api/auth/login", { email: user.email, password: OLD })).body.access_token);
    const secret: string = (await me.post("/api/auth/2fa/enable", { current_password: OLD })).body.secret;
    const code = new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate();
    const codes: string[] = (await me.post("/api/auth/2fa/confirm", { code, current_password: OLD })).body.recovery_codes;
    const challenge = (await api.post("/api/auth/login", { email: user.email, password: OLD })).body;
    t.equal(challenge.two_factor_required, true);
    const changed = await me.put("/api/profile/password", { current_password: OLD, password: NEW, password_confirmation: NEW, two_factor_code: codes[0] });
    t.equal(changed.status, 200, changed.text);
    const finished = await api.post("/api/auth/login-2fa", { two_factor_token: challenge.two_factor_token, code: codes[1] });
    t.equal(finished.status, 422, finished.text);
    t.same(finished.body.errors, { two_factor_token: ["The two-factor session has expired or is invalid; log in again."] });
    const fresh = (await api.post("/api/auth/login", { email: user.email, password: NEW })).body;
    t.equal((await api.post("/api/auth/login-2fa", { two_factor_token: fresh.two_factor_token, code: codes[1] })).status, 200, "a challenge of the new password does");
  });
});
