/**
 * The operator console's job notifications are sent only while someone watches
 * (sql/migrations/0130): a web process with a subscriber on {@link JOB_CONSOLE_CHANNEL} holds
 * the shared advisory lock {@link JOB_CONSOLE_WATCH_KEY} on its LISTEN connection, and the
 * triggers on `jobs` send `JobChanged` only when they cannot take that key exclusively.
 */

/** The realtime channel of the operator console's `JobChanged` events. */
export const JOB_CONSOLE_CHANNEL = "private-admin.jobs";

/** The advisory lock key of the console's watchers (the same number is in 0130's `jobs_console_watched`). */
export const JOB_CONSOLE_WATCH_KEY = 7_320_151_021n;
