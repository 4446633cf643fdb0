/**
 * The job kinds of the service, with their payload schemas. The API enqueues through these
 * and each has a task file of the same name in workers/tasks/.
 */
import { z } from "zod";
import { mailKinds } from "../mail/templates.ts";
import { defineJobKind } from "./kind.ts";

/** Hourly housekeeping (cron): realtime spill rows, old finished job records. */
export const maintenanceCleanup = defineJobKind("maintenance__cleanup", z.object({}).loose(), { maxAttempts: 3 });

/** One e-mail: rendered and delivered by the worker (SMTP or the outbox). */
export const emailsSend = defineJobKind(
  "emails__send",
  z.object({
    to: z.email(),
    kind: z.enum(mailKinds),
    locale: z.enum(["en", "de"]),
    params: z.record(z.string(), z.string()),
    link: z.url().optional(),
  }),
  { maxAttempts: 8 },
);
