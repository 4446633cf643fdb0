/**
 * Cron expressions of scheduled webhooks, read with croner: five fields (minute, hour, day
 * of month, month, day of week; the per-minute tick is the finest grain) or a nickname such
 * as `@hourly`, evaluated in the webhook's IANA timezone. Day of month and day of week
 * combine with OR, as in Vixie cron.
 */
import { Cron } from "croner";

const parse = (expression: string, timezone: string) => new Cron(expression, { timezone, mode: "5-part", paused: true });

/** Why `timezone` is not an IANA zone name, or null. */
export function timezoneProblem(timezone: string): string | null {
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
    return null;
  } catch {
    return `The timezone field must be an IANA time zone such as UTC or Europe/Berlin; "${timezone}" is not one.`;
  }
}

/** Why `expression` is not a usable cron expression, or null. */
export function cronProblem(expression: string, timezone = "UTC"): string | null {
  try {
    const cron = parse(expression, timezone);
    if (cron.nextRun() === null) return "The cron expression never matches a future minute.";
    return null;
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^CronPattern:\s*/, "");
    return `The cron field must be a five-field cron expression (minute hour day-of-month month day-of-week) or a nickname such as @hourly: ${reason}`;
  }
}

/** Whether the (valid) expression matches the minute of `at` in `timezone`. */
export function cronMatches(expression: string, timezone: string, at: Date): boolean {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  return parse(expression, timezone).match(minute);
}

/** The next run after `after`, or null (for display). */
export function nextRun(expression: string, timezone: string, after = new Date()): Date | null {
  try {
    return parse(expression, timezone).nextRun(after);
  } catch {
    return null;
  }
}
