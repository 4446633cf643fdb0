/**
 * Telling people about a new message by push and e-mail (notification kind `message_posted`;
 * e-mail is off until a user turns it on, push on until turned off).
 *
 * Glossary: a thread's *participants* are whoever took part in it: started it, wrote in it
 * or opened it. A reply goes to the participants; a new thread, which has none yet besides
 * its author, goes to the people of its project (the owner and the members of its teams).
 * Either way only people who may still read the thread (project access, or a site
 * administrator), whose account is not disabled are notified: by push when they have a
 * subscription and kept push on, by e-mail when they turned it on; the author never is.
 *
 * The push__send jobs are queued on the posting transaction, so a message that rolls back
 * notifies nobody; the job checks the user's choice again when it runs.
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { notifyByEmail } from "../notifications/email.ts";
import { notifyByPush } from "../notifications/notify.ts";
import { listMessageRecipients, type Audience } from "./store.ts";

/** What the notification says. */
export interface PostedMessage {
  threadId: number;
  subject: string;
  authorId: number;
  authorName: string;
  body: string;
}

/** Queues the notifications of a new message (call in the posting transaction); how many users were told. */
export async function notifyMessagePosted(tx: CommonQueryMethods, message: PostedMessage, audience: Audience): Promise<number> {
  const recipients = await listMessageRecipients(tx, message.threadId, message.authorId, audience);
  const title = audience === "project" ? `New thread: ${message.subject}` : `New message in ${message.subject}`;
  const text = `${message.authorName}: ${message.body.replace(/\s+/g, " ").trim()}`;
  const path = `/messages/threads/${message.threadId}`;
  for (const { id: userId, push, email } of recipients) {
    if (push) await notifyByPush(tx, { userId, kind: "message_posted", title, body: text.length > 200 ? `${text.slice(0, 199)}…` : text, url: path });
    if (email) {
      const params = { thread: message.subject, author: message.authorName, excerpt: text.length > 2000 ? `${text.slice(0, 1999)}…` : text };
      await notifyByEmail(tx, { userId, kind: "message_posted", params, path, choiceChecked: true });
    }
  }
  return recipients.length;
}
