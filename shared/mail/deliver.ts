/**
 * Delivering an e-mail: through SMTP_URL when configured, otherwise into the storage
 * outbox (`outbox/<time>-<id>.eml`, a complete RFC 5322 message) with its links logged at debug level, so
 * development works without a mail server and nothing is silently dropped. Outbox messages
 * expire after OUTBOX_TTL_DAYS (the storage sweep removes them), since they hold sign-in and
 * password-reset links and would otherwise pile up for as long as the service runs.
 */
import nodemailer from "nodemailer";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Storage } from "../storage/storage.ts";
import type { RenderedMail } from "./templates.ts";

export interface OutgoingMail extends RenderedMail {
  to: string;
  /** Stable id, so a retried job sends the same Message-ID. */
  id: string;
  link?: string;
}

/** How long an outbox message is kept: long enough to read it, not forever. */
export const OUTBOX_TTL_DAYS = 30;

type Transport = ReturnType<typeof nodemailer.createTransport>;
const transports = new Map<string, Transport>();

function smtp(url: string): Transport {
  let transport = transports.get(url);
  if (!transport) {
    transport = nodemailer.createTransport(url);
    transports.set(url, transport);
  }
  return transport;
}

/** Sends (or stores) one message. @throws when the SMTP server refuses it (the job retries). */
export async function deliverMail(deps: { config: Config; storage: Storage; log: Logger }, mail: OutgoingMail): Promise<{ via: "smtp" | "outbox"; key?: string }> {
  const domain = new URL(deps.config.appUrl).hostname || "localhost";
  const message = {
    from: deps.config.mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: `<${mail.id}@${domain}>`,
  };
  if (deps.config.mail.smtpUrl) {
    await smtp(deps.config.mail.smtpUrl).sendMail(message);
    return { via: "smtp" };
  }
  const raw = await nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" }).sendMail(message);
  const key = `outbox/${new Date().toISOString().replace(/[:.]/g, "-")}-${mail.id}.eml`;
  await deps.storage.put(key, raw.message as Buffer, {
    contentType: "message/rfc822",
    expiresAt: new Date(Date.now() + OUTBOX_TTL_DAYS * 86_400_000),
  });
  // Links sign in, verify or reset: only debug logging (a developer's own machine) shows them.
  deps.log.info({ to: mail.to, subject: mail.subject, outbox: key }, "e-mail stored in the outbox (SMTP_URL is not set)");
  if (mail.link) deps.log.debug({ outbox: key, link: mail.link }, "link of the e-mail stored in the outbox");
  return { via: "outbox", key };
}
