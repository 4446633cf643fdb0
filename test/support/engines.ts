/**
 * Real engines as judges (zip and unzip, MariaDB, pg_dump): a test that needs one skips,
 * with the reason, where it is missing. In CI (CI=true) a missing engine fails the run
 * instead, so a green CI run never means the real-engine checks were skipped; `.ci/run`
 * installs them.
 */
import t from "tap";

const reported = new Set<string>();

/**
 * For tap's `skip` option: `reason` (an engine is missing) or false. With CI=true, a reason
 * also adds one failing test per distinct reason.
 */
export function engineSkip<R extends string | false | null | undefined>(reason: R): R {
  if (reason && process.env.CI === "true" && !reported.has(reason)) {
    reported.add(reason);
    t.test(`CI requires this engine: ${reason}`, async (t) => {
      t.fail(`${reason} (CI=true: .ci/run installs the engines the tests compare against; a skip would hide their checks)`);
    });
  }
  return reason;
}
