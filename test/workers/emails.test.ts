import t from "tap";
import { simpleParser } from "mailparser";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import { startTestApp } from "../support/app.ts";
import { client } from "../support/http.ts";

t.test("without SMTP_URL, e-mails land in the storage outbox as complete messages", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const res = await client(app.url).post("/api/auth/register", { name: "Outbox Owl", email: "owl@example.test", password: "hoot hoot hoot" });
  t.equal(res.status, 201);
  const storage = new PostgresStorage(app.pool);
  let files = await storage.list("outbox/");
  for (let i = 0; i < 100 && files.length === 0; i += 1) {
    await new Promise((r) => setTimeout(r, 50));
    files = await storage.list("outbox/");
  }
  t.equal(files.length, 1);
  t.equal(files[0]!.contentType, "message/rfc822");
  const mail = await simpleParser((await storage.readBuffer(files[0]!.key))!);
  t.equal(mail.subject, "Confirm your e-mail address");
  t.match(mail.text, /\/verify-email\/\d+\/[0-9a-f]{40}\?expires=\d+&signature=[0-9a-f]{64}/);
  t.match(String(mail.html), /<a href="[^"]+verify-email/);
  t.match(mail.messageId, /^<job-\d+-verify_email@/);
});
