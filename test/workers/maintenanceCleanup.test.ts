import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { createLogger } from "../../shared/logger.ts";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import cleanup from "../../workers/tasks/maintenance__cleanup.ts";
import type { TaskContext } from "../../workers/context.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildUser } from "../support/factories.ts";
import { request } from "../support/http.ts";

const CLIENT = { client_id: "test-client", client_secret: "test-client-secret-0123456789" };
const none = z.object({});
const keys = z.object({ key: z.string() });

/** Runs the task as the scheduler would (no job record). */
async function runCleanup(app: TestApp): Promise<Record<string, number>> {
  const log = createLogger("silent");
  const ctx: TaskContext = {
    deps: { config: app.config, pool: app.pool, pgPool: app.db.pgPool, log, storage: new PostgresStorage(app.pool) },
    jobId: null,
    attempt: 1,
    maxAttempts: 1,
    log,
    signal: new AbortController().signal,
    progress: async () => {},
  };
  return (await cleanup.run({}, ctx)) as Record<string, number>;
}

const remaining = (pool: DatabasePool, query: ReturnType<typeof sql.fragment>) =>
  pool.anyFirst(sql.type(keys)`select key from (${query}) as rows order by key`);

t.test("maintenance__cleanup purges expired identity rows and keeps live ones", async (t) => {
  const app = await startTestApp(t);
  const { pool } = app;
  const [a, b, c, d] = [await buildUser(pool), await buildUser(pool), await buildUser(pool), await buildUser(pool)];
  const exec = (query: ReturnType<typeof sql.fragment>) => pool.query(sql.type(none)`${query}`);

  // Rate-limit counters: hourly windows (login windows are shorter with the default 900 s).
  await exec(sql.fragment`insert into rate_limit_counters (key, window_start, count) values
    ('ended', now() - interval '2 hours', 5), ('running', now() - interval '30 minutes', 5), ('just-started', now(), 1)`);
  // Revoked access tokens: kept until the token would have expired (plus a minute of clock tolerance).
  await exec(sql.fragment`insert into revoked_access_tokens (jti, user_id, expires_at) values
    ('expired', ${a.id}, now() - interval '1 hour'), ('within-tolerance', ${a.id}, now() - interval '10 seconds'),
    ('live', ${a.id}, now() + interval '1 hour')`);
  // oidc-provider models: expired ones, tokens of a grant that is gone, and a consumed (rotated) refresh token of a live grant.
  await exec(sql.fragment`insert into oauth_models (model, id, payload, grant_id, expires_at, consumed_at) values
    ('Grant', 'live-grant', '{}', null, now() + interval '1 day', null),
    ('Grant', 'expired-grant', '{}', null, now() - interval '1 day', null),
    ('RefreshToken', 'expired', '{}', 'live-grant', now() - interval '1 second', null),
    ('RefreshToken', 'rotated', '{}', 'live-grant', now() + interval '29 days', now()),
    ('RefreshToken', 'live', '{}', 'live-grant', now() + interval '30 days', null),
    ('RefreshToken', 'orphan', '{}', 'no-such-grant', now() + interval '30 days', null),
    ('RefreshToken', 'of-expired-grant', '{}', 'expired-grant', now() + interval '30 days', null)`);
  // Two-factor challenges: used or expired ones go.
  await exec(sql.fragment`insert into two_factor_challenges (token_hash, user_id, expires_at, used_at) values
    ('\\x01', ${a.id}, now() - interval '1 minute', null), ('\\x02', ${a.id}, now() + interval '5 minutes', now()),
    ('\\x03', ${a.id}, now() + interval '5 minutes', null)`);
  // Trusted devices: remembered for 90 days after they expired.
  await exec(sql.fragment`insert into trusted_devices (user_id, device_hash, browser, expires_at) values
    (${a.id}, '\\x01', 'long-expired', now() - interval '91 days'), (${a.id}, '\\x02', 'recently-expired', now() - interval '10 days'),
    (${a.id}, '\\x03', 'trusted', now() + interval '20 days')`);
  // Password resets (one per user).
  await exec(sql.fragment`insert into password_resets (user_id, token_hash, expires_at) values
    (${b.id}, '\\x01', now() - interval '1 minute'), (${c.id}, '\\x02', now() + interval '50 minutes'), (${d.id}, '\\x03', now() - interval '1 day')`);
  // Personal API tokens: listed as expired for 30 days, then deleted; tokens without an expiry stay.
  await exec(sql.fragment`insert into personal_access_tokens (user_id, name, token_hash, expires_at) values
    (${a.id}, 'long-expired', '\\x01', now() - interval '31 days'), (${a.id}, 'recently-expired', '\\x02', now() - interval '29 days'),
    (${a.id}, 'live', '\\x03', now() + interval '1 day'), (${a.id}, 'no-expiry', '\\x04', null)`);

  const result = await runCleanup(app);
  t.match(result, { rate_limit_counters: 1, revoked_access_tokens: 1, oauth_models: 4, two_factor_challenges: 2, trusted_devices: 1, password_resets: 2, personal_access_tokens: 1 });

  t.same(await remaining(pool, sql.fragment`select key from rate_limit_counters`), ["just-started", "running"]);
  t.same(await remaining(pool, sql.fragment`select jti as key from revoked_access_tokens`), ["live", "within-tolerance"]);
  t.same(await remaining(pool, sql.fragment`select model || ':' || id as key from oauth_models`), ["Grant:live-grant", "RefreshToken:live", "RefreshToken:rotated"]);
  t.same(await remaining(pool, sql.fragment`select encode(token_hash, 'hex') as key from two_factor_challenges`), ["03"]);
  t.same(await remaining(pool, sql.fragment`select browser as key from trusted_devices`), ["recently-expired", "trusted"]);
  t.same(await remaining(pool, sql.fragment`select user_id::text as key from password_resets`), [String(c.id)]);
  t.same(await remaining(pool, sql.fragment`select name as key from personal_access_tokens`), ["live", "no-expiry", "recently-expired"]);

  const again = await runCleanup(app);
  t.match(again, { rate_limit_counters: 0, revoked_access_tokens: 0, oauth_models: 0, two_factor_challenges: 0, trusted_devices: 0, password_resets: 0, personal_access_tokens: 0 });
});

t.test("after a cleanup, replaying a rotated refresh token still revokes its family", async (t) => {
  const app = await startTestApp(t);
  const password = "cleanup password";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const token = (body: Record<string, string>) => request(app.url, "POST", "/api/oauth/token", { body: { ...CLIENT, ...body } });
  const first = await token({ grant_type: "password", username: user.email, password });
  const second = await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token });
  t.equal(second.status, 200, second.text);

  await runCleanup(app);
  const replay = await token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token });
  t.equal(replay.body.error, "invalid_grant", "the rotated token is refused");
  const newest = await token({ grant_type: "refresh_token", refresh_token: second.body.refresh_token });
  t.equal(newest.body.error, "invalid_grant", "and the replay ended the newest one too");
});
