import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql } from "../../shared/db/pool.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import type { JobKind } from "../../shared/jobs/kind.ts";
import * as kinds from "../../shared/jobs/kinds.ts";
import { payoutsProcess } from "../../shared/jobs/kinds.ts";
import { findJob } from "../../shared/jobs/records.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

// No worker: every job stays queued, so only the policy decides whether a cancel succeeds.
t.test("jobs that notify or pay their owner cannot be cancelled by the owner", async (t) => {
  const app = await startTestApp(t);
  const password = "notice password";
  const victim = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const token = (await request(app.url, "POST", "/api/auth/login", { body: { email: victim.email, password } })).body.access_token as string;
  const session = client(app.url, token);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });

  t.test("the old address's notice of an e-mail change survives the session that asked for it", async (t) => {
    const moved = await session.put("/api/profile", { email: "taken.over@example.test", current_password: password });
    t.equal(moved.status, 200);
    const mails = (await session.get("/api/jobs?kind=emails__send")).body.data as { id: number }[];
    t.equal(mails.length, 2, "the confirmation and the notice are the caller's jobs");
    for (const mail of mails) {
      const res = await session.post(`/api/jobs/${mail.id}/cancel`);
      t.equal(res.status, 403);
      t.equal(res.body.code, "forbidden");
      t.match(res.body.message, /only an administrator/);
      t.equal((await findJob(app.pool, mail.id))?.status, "queued", "still goes out");
    }
  });

  t.test("a payout's job is not the seller's to cancel; an administrator may", async (t) => {
    const job = await app.pool.transaction((tx) => enqueue(tx, payoutsProcess, { payout_id: 1 }, { userId: victim.id, runAt: new Date(Date.now() + 60_000) }));
    t.equal((await session.post(`/api/jobs/${job.id}/cancel`)).status, 403);
    t.equal((await findJob(app.pool, job.id))?.status, "queued");
    const res = await client(app.url, admin.token).post(`/api/jobs/${job.id}/cancel`);
    t.equal(res.status, 200);
    t.equal(res.body.job.status, "cancelled");
  });
});

/** The kinds whose queued jobs only an administrator may cancel: those of before the flag, and the service's own refund (off by default). */
const ADMIN_ONLY = ["emails__send", "payments__refund", "payouts__process", "push__send"];

t.test("every kind: its owner may cancel a queued job exactly when the kind says so", async (t) => {
  const app = await startTestApp(t);
  const owner = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const all = Object.values(kinds as Record<string, JobKind>);
  t.same(all.filter((k) => !k.ownerMayCancel).map((k) => k.name).sort(), ADMIN_ONLY, "the notices, the payout and the service's own refund");
  // Records only (no payload: nothing to settle), so any kind can be held by the owner.
  const queued = (kind: string) =>
    app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`insert into jobs (kind, max_attempts, user_id) values (${kind}, 1, ${owner.user.id}) returning id`);
  for (const kind of [...all.map((k) => k.name), "unknown__kind"]) {
    const id = await queued(kind);
    const res = await client(app.url, owner.token).post(`/api/jobs/${id}/cancel`);
    const ownerMay = kind !== "unknown__kind" && !ADMIN_ONLY.includes(kind);
    t.equal(res.status, ownerMay ? 200 : 403, `${kind}: ${ownerMay ? "its owner cancels it" : "only an administrator"}`);
    if (!ownerMay) t.equal((await client(app.url, admin.token).post(`/api/jobs/${id}/cancel`)).status, 200, `${kind}: an administrator cancels it`);
  }
});
