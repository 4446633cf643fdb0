/**
 * The operator console in a real headless browser (Debian's chromium driven by
 * playwright-core; `.ci/run` installs chromium when missing, CHROMIUM_PATH points elsewhere):
 * an administrator signs in with the OAuth password grant, the page shows the queue, a job
 * enqueued by the test appears without a reload (the page hears JobChanged on
 * private-admin.jobs), and a failed job is retried from the page. The admin routes behind it
 * refuse other users and tokens without the admin scope. Signing out ends the session the
 * page signed in (a pasted token stays).
 */
import { existsSync } from "node:fs";
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import t, { type Test } from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { newTotpSecret } from "../../shared/auth/twoFactor.ts";
import { seal } from "../../shared/crypto.ts";
import { sql } from "../../shared/db/pool.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken, tokenFor } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { echoKind, refusedKind, testTasks } from "../support/testTasks.ts";

const chromium = process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const noBrowser = !chromium && "needs chromium (apt-get install chromium; .ci/run installs it, CHROMIUM_PATH names another)";

/** A headless chromium with a fresh profile (playwright gives it its own --user-data-dir), closed when `t` ends. */
async function openBrowser(t: Test) {
  const { chromium: launcher } = await import("playwright-core");
  const browser = await launcher.launch({
    executablePath: chromium as string,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** Fills the console's password sign-in form with the first-party client and sends it. */
async function signIn(page: Page, app: TestApp, email: string, password: string): Promise<void> {
  await page.fill("#password-form [name=username]", email);
  await page.fill("#password-form [name=password]", password);
  await page.fill("#password-form [name=client_id]", app.config.oauth.clientId!);
  await page.fill("#password-form [name=client_secret]", app.config.oauth.clientSecret!);
  await page.click("#password-form button");
}

t.test("admin job routes", async (t) => {
  const app = await startTestApp(t);
  const { token: userToken } = await buildUserWithToken(app.pool);
  const admin = await buildUser(app.pool, { roles: ["admin"] });
  const adminToken = await tokenFor(app.pool, admin);
  for (const path of ["/api/admin/jobs/stats", "/api/admin/jobs", "/api/admin/workers"]) {
    t.equal((await request(app.url, "GET", path)).status, 401, `${path}: 401 without a token`);
    t.equal((await request(app.url, "GET", path, { token: userToken })).status, 403, `${path}: 403 for a user`);
    t.equal((await request(app.url, "GET", path, { token: adminToken })).status, 200, `${path}: 200 for an administrator`);
  }
  const job = await enqueue(app.pool, echoKind, { value: 1 }, { userId: admin.id });
  const notFailed = await request(app.url, "POST", `/api/admin/jobs/${job.id}/retry`, { token: adminToken });
  t.equal(notFailed.status, 409, "a queued job cannot be retried");
  t.equal(notFailed.body.code, "job_not_retryable");
  t.equal((await request(app.url, "POST", "/api/admin/jobs/999999/retry", { token: adminToken })).status, 404);
  const listed = await request(app.url, "GET", "/api/admin/jobs?status=queued", { token: adminToken });
  t.ok(listed.body.data.some((j: { id: number }) => j.id === job.id), "the job list filters by status");
  const stats = await request(app.url, "GET", "/api/admin/jobs/stats", { token: adminToken });
  t.match(stats.body.kinds.find((k: { kind: string }) => k.kind === echoKind.name), { queued: 1, running: 0 }, "its kind counts one queued");
  t.equal(stats.body.throughput.length, 12, "twelve five-minute buckets");
});

t.test("the console page in headless chromium", { skip: noBrowser }, async (t) => {
  const app = await startTestApp(t, { worker: true, extraTasks: testTasks });
  const password = "console-password-1";
  const admin = await buildUser(app.pool, { roles: ["admin"], passwordHash: await hashPassword(password) });

  const browser = await openBrowser(t);
  const page = await browser.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  const consoleLines: string[] = [];
  page.on("console", (message) => consoleLines.push(`${message.type()}: ${message.text()}`));

  await page.goto(`${app.url}/api/admin/console`);
  await signIn(page, app, admin.email, password);
  await page.waitForSelector("#live.on", { timeout: 30_000 }).catch(async (error: Error) => {
    throw new Error(`${error.message}\nsign-in: ${await page.textContent("#sign-in-error")}\nconsole: ${consoleLines.join("\n")}\nerrors: ${pageErrors.join("\n")}`);
  });
  t.pass("signed in with the password grant and subscribed to the live channel");
  t.match(await page.textContent("#workers tbody"), /\d+/, "the in-process worker is listed");

  // A job the page did not ask about appears without a reload: JobChanged drives the re-read.
  const slow = await enqueue(app.pool, echoKind, { value: "later" }, { userId: admin.id, runAt: new Date(Date.now() + 3_600_000) });
  await page.waitForSelector(`#queued tbody tr:has-text("#${slow.id}")`, { timeout: 30_000 });
  t.pass("a job enqueued by the test appears in the queue without a reload");

  // A failing job ends in the failed list, and is retried from the page.
  const failing = await enqueue(app.pool, refusedKind, {}, { userId: admin.id });
  const row = `#failed tbody tr:has-text("#${failing.id}")`;
  await page.waitForSelector(row, { timeout: 60_000 });
  t.match(await page.textContent(row), /read-only/, "with its error");
  const times = () => app.pool.one(sql.type(z.object({ status: z.string(), started_at: z.date().nullable(), finished_at: z.date().nullable() }))`select status, started_at, finished_at from jobs where id = ${failing.id}`);
  const firstRun = await times();
  await page.click(`${row} button`);
  // The worker runs it again (and it fails again: the task always refuses), after the first run ended.
  const deadline = Date.now() + 60_000;
  let again = await times();
  while (!(again.started_at && firstRun.finished_at && again.started_at > firstRun.finished_at && again.status === "failed") && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await times();
  }
  t.ok(again.started_at && firstRun.finished_at && again.started_at > firstRun.finished_at, "the retry from the page ran the job again");
  t.equal(await page.textContent("#action-error"), "", "the page reported no error");
  t.same(pageErrors, [], "no script error on the page");
});

t.test("an operator with two-factor authentication signs in to the console with a code", { skip: noBrowser }, async (t) => {
  const app = await startTestApp(t);
  const password = "console-password-2";
  const admin = await buildUser(app.pool, { roles: ["admin"], passwordHash: await hashPassword(password) });
  const secret = newTotpSecret();
  await app.pool.query(sql.type(z.object({}))`
    update users set two_factor_secret = ${sql.binary(seal(app.config.appKey, secret))}, two_factor_confirmed_at = now() where id = ${admin.id}`);
  const browser = await openBrowser(t);
  const page = await browser.newPage();
  await page.goto(`${app.url}/api/admin/console`);
  await signIn(page, app, admin.email, password);
  await page.waitForSelector("#sign-in-error:not(:empty)", { timeout: 30_000 });
  t.match(await page.textContent("#sign-in-error"), /two-factor/, "without a code the page says the code is needed");
  await page.fill("#password-form [name=otp]", new TOTP({ secret: Secret.fromBase32(secret), period: 30 }).generate());
  await page.click("#password-form button");
  await page.waitForSelector("#live.on", { timeout: 30_000 }).catch(async (error: Error) => {
    throw new Error(`${error.message}\nsign-in: ${await page.textContent("#sign-in-error")}`);
  });
  t.pass("signed in with the password and a code");
});

t.test("signing out of the console ends the session it signed in, not a pasted token", { skip: noBrowser }, async (t) => {
  const app = await startTestApp(t);
  const password = "console-password-3";
  const admin = await buildUser(app.pool, { roles: ["admin"], passwordHash: await hashPassword(password) });
  const browser = await openBrowser(t);
  const page = await browser.newPage();
  const stats = async (token: string) => (await request(app.url, "GET", "/api/admin/jobs/stats", { token })).status;

  await page.goto(`${app.url}/api/admin/console`);
  await signIn(page, app, admin.email, password);
  await page.waitForSelector("#live.on", { timeout: 30_000 });
  const signedIn = await page.evaluate(() => sessionStorage.getItem("sf-console-token"));
  t.ok(signedIn, "the page holds the token it got");
  t.equal(await stats(signedIn!), 200);
  await page.click("#sign-out");
  await page.waitForSelector("#sign-in:not([hidden])", { timeout: 30_000 });
  t.equal(await stats(signedIn!), 401, "the signed-out session's token no longer works anywhere");

  const pasted = await tokenFor(app.pool, admin);
  await page.fill("#token-form [name=token]", pasted);
  await page.click("#token-form button");
  await page.waitForSelector("#live.on", { timeout: 30_000 });
  await page.click("#sign-out");
  await page.waitForSelector("#sign-in:not([hidden])", { timeout: 30_000 });
  t.equal(await stats(pasted), 200, "a pasted personal token is left alone");
});
