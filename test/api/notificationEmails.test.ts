/**
 * E-mail notifications received by a real SMTP peer on loopback: a card assigned to someone,
 * a deployment's result (success and failure) and new messages, each in the recipient's
 * language with a button into the web client; the defaults (on for direct events, off for
 * messages) and the user's choices in /settings decide who gets one.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildEnvironment, buildGeneration, sampleFiles, waitForDeployment } from "../support/deploymentFactories.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { startFtpPeer } from "../support/peers/ftpPeer.ts";
import { startSmtp } from "../support/smtp.ts";
import { until } from "../support/wait.ts";

t.test("notifications by e-mail", async (t) => {
  const smtp = await startSmtp(t);
  const app = await startTestApp(t, { worker: true, env: { SMTP_URL: smtp.url, FRONTEND_URL: "https://app.example.test" } });
  const owner = await buildUserWithToken(app.pool, { name: "Olivia Owner" });
  const member = await buildUserWithToken(app.pool, { name: "Max Mitglied", language: "de" });
  const quiet = await buildUserWithToken(app.pool, { name: "Quinn Quiet" });
  const asOwner = client(app.url, owner.token);
  const project = (await asOwner.post("/api/projects", { name: "Mail" })).body.project;
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3, [quiet.user.id]: 3 }, [project.id]);
  const settled = () =>
    until(
      async () =>
        (await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(*)::int as n from jobs where kind = 'emails__send' and status not in ('succeeded', 'failed', 'cancelled')`)) === 0,
      { timeoutMs: 60_000, message: "the mail jobs to finish" },
    );
  const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.toLowerCase().includes(email.toLowerCase()));

  t.test("the defaults: direct events on, messages off; the settings show them", async (t) => {
    const mine = await client(app.url, member.token).get("/api/settings");
    t.same(mine.body.settings.notifications, {
      deployment_completed: { email: true, push: true },
      kanban_card_assigned: { email: true, push: true },
      message_posted: { email: false, push: true },
      support_ticket_reply: { email: true, push: true },
      billing: { email: true, push: true },
    });
  });

  await t.test("a card assigned to someone e-mails them in their language, unless they turned it off", async (t) => {
    const board = (await asOwner.post(`/api/projects/${project.id}/kanban`, { name: "B", columns: ["A"] })).body.board;
    const card = (await asOwner.post("/api/kanban-cards", { column_id: board.columns[0].id, title: "Write the docs" })).body.card;
    t.equal((await asOwner.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: member.user.id })).status, 201);
    const mail = await smtp.waitFor(member.user.email, /zugewiesen/);
    t.equal(mail.subject, `Olivia Owner hat dich der Karte #${card.id} zugewiesen: Write the docs`);
    t.match(mail.text, /Hallo Max Mitglied/);
    t.ok(mail.links.includes(`https://app.example.test/kanban-cards/${card.id}`), "the button leads into the web client");

    t.equal((await client(app.url, quiet.token).put("/api/settings", { notifications: { kanban_card_assigned: { email: false } } })).status, 200);
    t.equal((await asOwner.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: quiet.user.id })).status, 201);
    t.equal((await asOwner.post(`/api/kanban-cards/${card.id}/assignees`, { user_id: owner.user.id })).status, 201, "assigning oneself");
    await settled();
    t.equal(mailsTo(quiet.user.email).length, 0, "no e-mail after turning it off");
    t.equal(mailsTo(owner.user.email).length, 0, "no e-mail to whoever assigned themselves");
  });

  await t.test("a card assigned through the card write form e-mails each person added, once", async (t) => {
    const third = await buildUserWithToken(app.pool, { name: "Theo Third" });
    await buildTeam(app.pool, owner.user.id, { [third.user.id]: 3 }, [project.id]);
    const board = (await asOwner.post(`/api/projects/${project.id}/kanban`, { name: "Form", columns: ["A"] })).body.board;
    const created = await asOwner.post("/api/kanban-cards", { column_id: board.columns[0].id, title: "Assigned on create", assignees: [member.user.id, owner.user.id] });
    t.equal(created.status, 201, created.text);
    const card = created.body.card;
    const first = await smtp.waitFor(member.user.email, /Assigned on create/);
    t.equal(first.subject, `Olivia Owner hat dich der Karte #${card.id} zugewiesen: Assigned on create`);
    t.equal((await asOwner.put(`/api/kanban-cards/${card.id}`, { assignees: [member.user.id, owner.user.id, third.user.id] })).status, 200);
    const added = await smtp.waitFor(third.user.email, /Assigned on create/);
    t.equal(added.subject, `Olivia Owner assigned you to card #${card.id}: Assigned on create`);
    await settled();
    t.equal(mailsTo(member.user.email).filter((m) => /Assigned on create/.test(m.subject)).length, 1, "someone already assigned is not told again");
    t.equal(mailsTo(owner.user.email).length, 0, "nor whoever assigned themselves");
  });

  await t.test("new messages e-mail only those who turned it on, never the author", async (t) => {
    t.equal((await client(app.url, quiet.token).put("/api/settings", { notifications: { message_posted: { email: true } } })).status, 200);
    const created = await asOwner.post("/api/messages/threads", { subject: "Kick-off", project_id: project.id, body: "Hello all" });
    t.equal(created.status, 201, created.text);
    const mail = await smtp.waitFor(quiet.user.email, /Kick-off/);
    t.equal(mail.subject, "New message in Kick-off");
    t.match(mail.text, /Olivia Owner: Hello all/);
    t.ok(mail.links.includes(`https://app.example.test/messages/threads/${created.body.thread.id}`));
    await settled();
    t.equal(mailsTo(member.user.email).filter((m) => /Kick-off/.test(m.subject)).length, 0, "off by default");
    t.equal(mailsTo(owner.user.email).length, 0, "not the author");
  });

  await t.test("a deployment's result e-mails whoever started it", async (t) => {
    const ftp = await startFtpPeer();
    t.teardown(() => ftp.close());
    const projectId = await buildProject(app.pool, owner.user.id);
    const ftpConfig = { host: ftp.host, port: ftp.port, username: ftp.username, password: ftp.password, remote_path: "/site", passive_mode: true };
    const envId = await buildEnvironment(app.url, owner.token, projectId, { ftp_config: ftpConfig });
    const deployOnce = async () => {
      const generation = await buildGeneration(app.pool, projectId, owner.user.id, sampleFiles(String(Math.random())));
      const created = await asOwner.post("/api/deployments", { environment_id: envId, code_generation_id: generation });
      t.equal(created.status, 201, created.text);
      t.equal((await asOwner.post(`/api/deployments/${created.body.deployment.id}/execute`)).status, 202);
      return waitForDeployment(app.url, owner.token, created.body.deployment.id);
    };
    const ok = await deployOnce();
    t.equal(ok.status, "succeeded");
    const success = await smtp.waitFor(owner.user.email, new RegExp(`Deployment #${ok.id} .*succeeded`));
    t.ok(success.links.includes(`https://app.example.test/deployments/${ok.id}`));

    t.equal((await asOwner.put(`/api/environments/${envId}`, { ftp_config: { ...ftpConfig, password: "Wr0ng-Passw0rd-for-ftp" } })).status, 200);
    const bad = await deployOnce();
    t.equal(bad.status, "failed");
    const failure = await smtp.waitFor(owner.user.email, new RegExp(`Deployment #${bad.id} .*failed`));
    t.match(failure.text, bad.error);
    t.notMatch(failure.text, "Wr0ng-Passw0rd-for-ftp", "no secret in the e-mail");
  });
});
