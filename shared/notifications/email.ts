/**
 * The e-mail side of a notification: queued on the caller's connection (so it goes out only
 * if the change it reports commits) when the user's e-mail choice for the kind allows it
 * (defaults: NOTIFICATION_DEFAULTS), in the user's language, to an account that is not
 * disabled. The link is a path in the web client; the mail task resolves it against
 * FRONTEND_URL.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { enqueueMail } from "../mail/enqueueMail.ts";
import type { MailKind } from "../mail/templates.ts";
import { wantsNotification } from "../settings/store.ts";
import type { NotificationKind } from "../settings/notificationKinds.ts";

export interface EmailNotification {
  userId: number;
  kind: NotificationKind;
  /** The mail template (by default the one named like the kind). */
  template?: MailKind;
  /** The template's placeholders besides `{name}` (filled in from the account). */
  params: Record<string, string>;
  /** Where the e-mail's button leads: a path in the web client (`/kanban-cards/7`). */
  path: string;
  /** Set when the caller already checked the choice (a query that chose the recipients). */
  choiceChecked?: boolean;
}

const recipientRow = z.object({ email: z.string(), name: z.string(), language: z.string() });

/** Queues the e-mail of a notification; whether one was queued. */
export async function notifyByEmail(conn: CommonQueryMethods, notification: EmailNotification): Promise<boolean> {
  const user = await conn.maybeOne(sql.type(recipientRow)`
    select email, name, language from users where id = ${notification.userId} and disabled_at is null`);
  if (!user) return false;
  if (!notification.choiceChecked && !(await wantsNotification(conn, notification.userId, notification.kind, "email"))) return false;
  await enqueueMail(conn, {
    to: user.email,
    kind: notification.template ?? (notification.kind as MailKind),
    locale: user.language,
    params: { name: user.name, ...notification.params },
    link: notification.path,
    userId: notification.userId,
  });
  return true;
}
