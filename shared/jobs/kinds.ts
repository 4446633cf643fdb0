/**
 * The job kinds of the service, with their payload schemas. The API enqueues through these
 * and each has a task file of the same name in workers/tasks/.
 */
import { z } from "zod";
import { defineJobKind } from "./kind.ts";

/** Hourly housekeeping (cron): realtime spill rows, old finished job records. */
export const maintenanceCleanup = defineJobKind("maintenance__cleanup", z.object({}).loose(), { maxAttempts: 3 });
