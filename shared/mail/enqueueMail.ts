/**
 * Queues an e-mail on the caller's connection (so it is sent only if the change it
 * reports commits).
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { emailsSend } from "../jobs/kinds.ts";
import type { MailKind } from "./templates.ts";

export interface MailRequest {
  to: string;
  kind: MailKind;
  locale: string;
  params: Record<string, string>;
  link?: string;
  userId?: number | null;
}

export async function enqueueMail(conn: CommonQueryMethods, mail: MailRequest): Promise<void> {
  await enqueue(
    conn,
    emailsSend,
    { to: mail.to, kind: mail.kind, locale: mail.locale === "de" ? "de" : "en", params: mail.params, ...(mail.link ? { link: mail.link } : {}) },
    { userId: mail.userId ?? null },
  );
}
