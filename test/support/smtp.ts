/**
 * A real SMTP server (smtp-server) in the test process: the service sends through
 * SMTP_URL, the test reads what arrived, parsed by mailparser.
 */
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import type { Test } from "tap";

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  /** Every http(s) link in the text part. */
  links: string[];
}

export interface SmtpPeer {
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the first message to `to` matching `subject` (received so far or later). */
  waitFor(to: string, subject?: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
}

export async function startSmtp(t: Test): Promise<SmtpPeer> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(", ") : (mail.to?.text ?? "");
          const text = mail.text ?? "";
          messages.push({
            to,
            subject: mail.subject ?? "",
            text,
            html: typeof mail.html === "string" ? mail.html : "",
            messageId: mail.messageId ?? "",
            links: text.match(/https?:\/\/\S+/g) ?? [],
          });
          for (const wake of waiters) wake();
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const find = (to: string, subject?: RegExp) => messages.find((m) => m.to.toLowerCase().includes(to.toLowerCase()) && (!subject || subject.test(m.subject)));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor: (to, subject, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = find(to, subject);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no mail to ${to}${subject ? ` matching ${subject}` : ""} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}
