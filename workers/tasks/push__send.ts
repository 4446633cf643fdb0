/**
 * Pushes one notification to a user's browsers, if they chose push for its kind and their
 * account is not disabled. A subscription the push service answers 404 or 410 is removed;
 * those that failed otherwise get a later round of their own (with back-off), so a retry
 * never repeats a delivered message.
 */
import { findUserById } from "../../shared/db/users.ts";
import { pushSend } from "../../shared/jobs/kinds.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { pushEnabled, sendPush } from "../../shared/push/send.ts";
import { deleteSubscriptionById, listTargets, markDelivered } from "../../shared/push/store.ts";
import { wantsNotification } from "../../shared/settings/store.ts";
import { defineTask } from "../defineTask.ts";

const MAX_ROUNDS = 5;

export default defineTask(pushSend, async (payload, { deps, log }) => {
  const { config, pool } = deps;
  if (!pushEnabled(config)) return { skipped: "push_not_configured" };
  // A disabled account (or one deleted since) hears nothing, as it gets no e-mail.
  const user = await findUserById(pool, payload.user_id);
  if (!user || user.disabled_at !== null) return { skipped: "account_disabled" };
  if (!(await wantsNotification(pool, payload.user_id, payload.kind, "push"))) return { skipped: "user_choice" };
  const targets = await listTargets(pool, config.appKey, payload.user_id, payload.subscription_ids);
  const message = JSON.stringify({ kind: payload.kind, title: payload.title, body: payload.body, url: payload.url });
  let sent = 0;
  let removed = 0;
  const again: number[] = [];
  for (const target of targets) {
    const outcome = await sendPush(config, target, message);
    if (outcome.ok) {
      sent += 1;
      await markDelivered(pool, target.id);
    } else if (outcome.gone) {
      removed += 1;
      await deleteSubscriptionById(pool, target.id);
    } else {
      log.warn({ subscription: target.id, error: outcome.error }, "push delivery failed; retrying later");
      again.push(target.id);
    }
  }
  if (again.length && payload.round < MAX_ROUNDS) {
    const runAt = new Date(Date.now() + 30_000 * 2 ** payload.round);
    await enqueue(pool, pushSend, { ...payload, subscription_ids: again, round: payload.round + 1 }, { userId: payload.user_id, runAt });
  }
  return { sent, removed, retrying: again.length };
});
