/**
 * Scheduled work, in graphile-worker's crontab format. Every worker process registers the
 * same schedule; graphile-worker makes sure each tick runs once across all of them.
 */
export const crontab = [
  // Expired realtime payloads, finished job records past retention, stale heartbeats.
  "17 * * * * maintenance__cleanup ?max=3",
  // Generation archives past ARCHIVE_TTL_HOURS: removed from storage, marked deleted.
  "41 * * * * archives__cleanup ?max=3",
  // Storage objects past their expiry and a grace period: archives, upload bundles, outbox e-mails.
  "53 * * * * storage__sweep ?max=3",
  // Storage files of deleted media, listed by the media tables' delete triggers, and day-old files no row names.
  "29 * * * * media__sweep ?max=3",
  // Outbound webhooks: outbox events missed by the trigger's kick, and scheduled deliveries.
  "* * * * * webhooks__dispatch ?max=3",
  "* * * * * webhooks__schedule ?max=3",
  // Project subscriptions and patron memberships that ended: renewed from credits, or expired.
  "7 3 * * * subscriptions__renew ?max=3",
  // Page views past VISITS_RETENTION_DAYS: rolled up into daily figures, raw rows and old salts deleted.
  "37 * * * * visits__rollup ?max=3",
].join("\n");
