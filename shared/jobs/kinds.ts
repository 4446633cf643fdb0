/**
 * The job kinds of the service, with their payload schemas. The API enqueues through these
 * and each has a task file of the same name in workers/tasks/.
 *
 * `ownerMayCancel` is said per kind, never assumed: without it only an administrator may
 * cancel a queued job of the kind (api/policies/job.ts). The notices (e-mail, push) and the
 * payout leave it off; the scheduled kinds have it although they run for no one (a job with
 * no owner is an administrator's to cancel anyway).
 */
import { z } from "zod";
import { mailKinds } from "../mail/templates.ts";
import { NOTIFICATION_KINDS } from "../settings/notificationKinds.ts";
import { defineJobKind } from "./kind.ts";

/** Hourly housekeeping (cron): realtime spill rows, old finished job records. */
export const maintenanceCleanup = defineJobKind("maintenance__cleanup", z.object({}).loose(), { maxAttempts: 3, ownerMayCancel: true });

/** One e-mail: rendered and delivered by the worker (SMTP or the outbox). */
export const emailsSend = defineJobKind(
  "emails__send",
  z.object({
    to: z.email(),
    kind: z.enum(mailKinds),
    locale: z.enum(["en", "de"]),
    params: z.record(z.string(), z.string()),
    /** Absolute, or a path in the web client (resolved against FRONTEND_URL when sent). */
    link: z.union([z.url(), z.string().regex(/^\/(?![/\\])\S*$/)]).optional(),
  }),
  { maxAttempts: 8 },
);

/**
 * Parses SQL text: a schema revision (create or update of a project schema) or a
 * stand-alone parse of POST /sql-parse.
 */
export const schemasParse = defineJobKind(
  "schemas__parse",
  z.discriminatedUnion("target", [
    z.object({ target: z.literal("schema"), schema_id: z.number().int().positive(), revision_id: z.number().int().positive() }),
    z.object({ target: z.literal("sql_parse"), parse_id: z.number().int().positive() }),
  ]),
  { maxAttempts: 3, ownerMayCancel: true },
);

/** A template run (execute or preview), or a generator run (several templates, one generation). */
export const templatesExecute = defineJobKind(
  "templates__execute",
  z.object({
    mode: z.enum(["execute", "preview"]),
    project_id: z.number().int().positive(),
    user_id: z.number().int().positive(),
    /** The templates to render, in order (one for a template run). */
    template_ids: z.array(z.number().int().positive()).min(1).max(100),
    generator_id: z.number().int().positive().nullable().default(null),
    /** A generator's schema, given to schema variables without a value. */
    schema_id: z.number().int().positive().nullable().default(null),
    /** A generator's stored values (below the request's). */
    base_values: z.record(z.string(), z.unknown()).default({}),
    /** The request's values. */
    values: z.record(z.string(), z.unknown()),
    /** A generator run that also applies the generator's active code adjustments (its `apply_adjustments` flag). */
    apply_adjustments: z.boolean().default(false),
  }),
  { maxAttempts: 3, ownerMayCancel: true },
);

/** Builds (or rebuilds) the zip of a code generation into storage. */
export const archivesBuild = defineJobKind("archives__build", z.object({ code_generation_id: z.number().int().positive() }), { maxAttempts: 5, ownerMayCancel: true });

/** Scheduled: removes expired generation archives from storage. */
export const archivesCleanup = defineJobKind("archives__cleanup", z.object({}).loose(), { maxAttempts: 3, ownerMayCancel: true });

/** Runs one deployment (FTP, SSH or git) of a code generation; resumable across attempts. */
export const deploymentsRun = defineJobKind("deployments__run", z.object({ deployment_id: z.number().int().positive() }), { maxAttempts: 5, ownerMayCancel: true });

/** Runs a deployment of the upload form (files and credentials sealed in storage, never in the payload). */
export const deploymentsUpload = defineJobKind("deployments__upload", z.object({ upload_key: z.string().regex(/^deployment-uploads\/[A-Za-z0-9_-]{16,64}$/) }), { maxAttempts: 2, ownerMayCancel: true });

/** Scheduled and kicked by CodeGenerated events: fans unprocessed outbox events out to webhook deliveries. */
export const webhooksDispatch = defineJobKind("webhooks__dispatch", z.object({}).loose(), { maxAttempts: 5, ownerMayCancel: true });

/** Scheduled every minute: deliveries of the scheduled webhooks whose cron expression matches the tick. */
export const webhooksSchedule = defineJobKind("webhooks__schedule", z.object({ _cron: z.object({ ts: z.string() }).loose().optional() }).loose(), { maxAttempts: 3, ownerMayCancel: true });

/** One webhook delivery: a signed POST to the webhook's URL, retried with exponential back-off. */
export const webhooksDeliver = defineJobKind("webhooks__deliver", z.object({ delivery_id: z.number().int().positive() }), { maxAttempts: 8, ownerMayCancel: true });

/** Scheduled: removes storage objects (archives, upload bundles, outbox e-mails) that expired more than a grace period ago. */
export const storageSweep = defineJobKind("storage__sweep", z.object({}).loose(), { maxAttempts: 3, ownerMayCancel: true });

/** Scheduled: removes the storage files of deleted media (template media) listed in `media_garbage`. */
export const mediaSweep = defineJobKind("media__sweep", z.object({}).loose(), { maxAttempts: 3, ownerMayCancel: true });

/** Applies the active code adjustments of a generation's template or generator into a new generation. */
export const adjustmentsApply = defineJobKind(
  "adjustments__apply",
  z.object({ code_generation_id: z.number().int().positive(), user_id: z.number().int().positive() }),
  { maxAttempts: 3, ownerMayCancel: true },
);

/** Processes one seller payout: attaches earnings past the refund hold, writes the SEPA transfer file, marks it sent. */
export const payoutsProcess = defineJobKind("payouts__process", z.object({ payout_id: z.number().int().positive() }), { maxAttempts: 5 });

/** Applies one recorded payment webhook event (shared/payments/events.ts); the event row makes it exactly-once. */
export const paymentsProcess = defineJobKind("payments__process", z.object({ payment_event_id: z.number().int().positive() }), { maxAttempts: 8, ownerMayCancel: true });

/** Refunds at its provider a payment that succeeded but delivered nothing (shared/payments/autoRefund.ts), and applies the refund. */
export const paymentsRefund = defineJobKind("payments__refund", z.object({ transaction_id: z.number().int().positive() }), { maxAttempts: 8 });

/** Daily (cron): renews project subscriptions and patron memberships that ended, or expires them; `_cron.ts` is the run's clock. */
export const subscriptionsRenew = defineJobKind("subscriptions__renew", z.object({ _cron: z.object({ ts: z.string() }).loose().optional() }).loose(), { maxAttempts: 3, ownerMayCancel: true });
/** One notification pushed to a user's browsers (the subscriptions that failed transiently, on a later round). */
export const pushSend = defineJobKind(
  "push__send",
  z.object({
    user_id: z.number().int().positive(),
    kind: z.enum(NOTIFICATION_KINDS),
    title: z.string().max(200),
    body: z.string().max(1000),
    url: z.string().max(2048).nullable().default(null),
    /** Only these subscriptions (a retry round); all of the user's when absent. */
    subscription_ids: z.array(z.number().int().positive()).max(1000).optional(),
    round: z.number().int().min(0).max(10).default(0),
  }),
  { maxAttempts: 3 },
);

/** Scheduled hourly: raw page views past VISITS_RETENTION_DAYS rolled up into daily figures and deleted; past days' salts deleted. */
export const visitsRollup = defineJobKind("visits__rollup", z.object({}).loose(), { maxAttempts: 3, ownerMayCancel: true });

/** Automatic translation of a schema's labels into one language through the translation provider. */
export const translationsAuto = defineJobKind(
  "translations__auto",
  z.object({
    schema_id: z.number().int().positive(),
    target_language: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/),
    source_language: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/).nullable().default(null),
  }),
  { maxAttempts: 5, ownerMayCancel: true },
);
