import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

t.test("support tickets", async (t) => {
  const app = await startTestApp(t);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const owner = await buildUserWithToken(app.pool, { language: "de" });
  const stranger = await buildUserWithToken(app.pool);
  const asOwner = client(app.url, owner.token);
  const asAdmin = client(app.url, admin.token);
  const mails = () =>
    app.pool.any(sql.type(z.object({ kind: z.string(), locale: z.string(), to: z.string() }))`
      select payload ->> 'kind' as kind, payload ->> 'locale' as locale, payload ->> 'to' as to from jobs where kind = 'emails__send' order by id`);

  let ticketId = 0;
  t.test("a user opens, lists and reads their own ticket; others cannot see it", async (t) => {
    t.equal((await request(app.url, "POST", "/api/support-tickets", { body: { subject: "x", body: "y" } })).status, 401);
    const bad = await asOwner.post("/api/support-tickets", { subject: "", body: "", category: "gossip", priority: "now" });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.subject && bad.body.errors.body && bad.body.errors.category && bad.body.errors.priority);
    const created = await asOwner.post("/api/support-tickets", { subject: "Deploy fails", body: "My FTP deployment fails with 530.", category: "technical", priority: "high" });
    t.equal(created.status, 201, created.text);
    ticketId = created.body.ticket.id;
    t.equal(created.body.ticket.status, "open");
    t.equal(created.body.ticket.messages.length, 1);
    t.equal((await asOwner.get("/api/support-tickets")).body.meta.total, 1);
    t.equal((await client(app.url, stranger.token).get(`/api/support-tickets/${ticketId}`)).status, 404, "a stranger gets 404");
    t.equal((await client(app.url, stranger.token).post(`/api/support-tickets/${ticketId}/replies`, { body: "me too" })).status, 404);
    t.equal((await client(app.url, stranger.token).get("/api/admin/support-tickets")).status, 403);
  });

  t.test("staff replies notify the user in their language; internal notes stay internal", async (t) => {
    const note = await asAdmin.post(`/api/admin/support-tickets/${ticketId}/replies`, { body: "Probably their firewall.", is_internal: true });
    t.equal(note.status, 201);
    t.equal((await mails()).length, 0, "a note e-mails no one");
    const reply = await asAdmin.post(`/api/admin/support-tickets/${ticketId}/replies`, { body: "Please check your FTP password." });
    t.equal(reply.status, 201, reply.text);
    t.same(await mails(), [{ kind: "support_ticket_reply", locale: "de", to: owner.user.email }]);
    const seen = await asOwner.get(`/api/support-tickets/${ticketId}`);
    t.equal(seen.body.ticket.status, "pending", "waiting for the user");
    t.same(seen.body.ticket.messages.map((m: { body: string }) => m.body), ["My FTP deployment fails with 530.", "Please check your FTP password."], "no internal note");
    t.notOk(seen.text.includes("firewall"));
    const full = await asAdmin.get(`/api/admin/support-tickets/${ticketId}`);
    t.equal(full.body.ticket.messages.length, 3, "administrators see the note");

    t.equal((await asOwner.put("/api/settings", { notifications: { support_ticket_reply: { email: false } } })).status, 200);
    await asAdmin.post(`/api/admin/support-tickets/${ticketId}/replies`, { body: "Any news?" });
    t.equal((await mails()).length, 1, "no e-mail once the user turned them off");

    const answer = await asOwner.post(`/api/support-tickets/${ticketId}/replies`, { body: "That was it, thanks." });
    t.equal(answer.status, 201);
    t.equal((await asOwner.get(`/api/support-tickets/${ticketId}`)).body.ticket.status, "open", "the user's reply reopens it");
  });

  t.test("administrators assign and move the status forward; closed is final", async (t) => {
    const notAdmin = await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { assigned_to: stranger.user.id });
    t.equal(notAdmin.status, 422, "only administrators can be assigned");
    const assigned = await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { assigned_to: admin.user.id, status: "resolved" });
    t.equal(assigned.status, 200, assigned.text);
    t.equal(assigned.body.ticket.assigned_to, admin.user.id);
    t.equal((await asAdmin.get(`/api/admin/support-tickets?status=resolved&assigned_to=${admin.user.id}`)).body.meta.total, 1);
    t.equal((await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { status: "pending" })).status, 409, "resolved cannot go back to pending");
    const closed = await asOwner.post(`/api/support-tickets/${ticketId}/close`);
    t.equal(closed.status, 200);
    t.ok(closed.body.ticket.closed_at);
    const late = await asOwner.post(`/api/support-tickets/${ticketId}/replies`, { body: "one more thing" });
    t.equal(late.status, 409);
    t.equal(late.body.code, "ticket_closed");
    t.equal((await asAdmin.put(`/api/admin/support-tickets/${ticketId}`, { status: "open" })).status, 409, "closed is final");
    const audit = await asAdmin.get(`/api/admin/audit-log?subject_type=support_ticket&subject_id=${ticketId}`);
    t.equal(audit.body.data.length, 1);
  });
});
