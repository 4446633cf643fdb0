/**
 * Telling a user about something (a deployment finished, a card assigned, a message, a
 * ticket reply) through the channels their settings allow. Push is queued here, on the
 * caller's connection, so it goes out only if the change it reports commits; the task
 * checks the user's choice when it runs.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { pushSend } from "../jobs/kinds.ts";
import type { NotificationKind } from "../settings/notificationKinds.ts";

export interface Notification {
  userId: number;
  kind: NotificationKind;
  title: string;
  body: string;
  /** Where the notification leads in the web client (relative or absolute). */
  url?: string | null;
}

/** Queues the push side of a notification (nothing for a user without any subscription). */
export async function notifyByPush(conn: CommonQueryMethods, notification: Notification): Promise<void> {
  const subscribed = await conn.exists(sql.type(z.object({}))`select 1 from push_subscriptions where user_id = ${notification.userId}`);
  if (!subscribed) return;
  await enqueue(
    conn,
    pushSend,
    {
      user_id: notification.userId,
      kind: notification.kind,
      title: notification.title.slice(0, 200),
      body: notification.body.slice(0, 1000),
      url: notification.url ?? null,
    },
    { userId: notification.userId },
  );
}
