/**
 * The runner supervisor's own rules, with stand-in runners (a promise that ends and a stop):
 * a runner that ends on its own is started again after its jobs are unlocked, the unlock is
 * retried with a doubling wait while the database does not answer, and a stop, also one that
 * comes while a restart waits, starts nothing more. The restart through a real database
 * outage is test/workers/databaseOutage.test.ts.
 */
import type { Runner } from "graphile-worker";
import t from "tap";
import { createLogger } from "../../shared/logger.ts";
import { superviseRunner } from "../../workers/supervisedRunner.ts";
import { until } from "../support/wait.ts";

interface FakeRunner {
  runner: Runner;
  end(error?: Error): void;
  stopped: boolean;
}

/** A stand-in runner; as graphile-worker's, one that has ended refuses a stop. */
function fakeRunner(): FakeRunner {
  let settle: (error?: Error) => void = () => {};
  let ended = false;
  const promise = new Promise<void>((resolve, reject) => (settle = (error) => ((ended = true), error ? reject(error) : resolve())));
  promise.catch(() => {});
  const fake: FakeRunner = {
    runner: {
      promise,
      stop: async () => {
        if (ended) throw new Error("Runner is already stopped");
        fake.stopped = true;
        settle();
      },
    } as unknown as Runner,
    end: (error) => settle(error),
    stopped: false,
  };
  return fake;
}

const log = createLogger("silent");

/** A `start` that makes fake runners into `runners`, each with one worker id, `worker-<n>`. */
const startFakes = (runners: FakeRunner[]) => async (ids: Set<string>) => {
  const fake = fakeRunner();
  runners.push(fake);
  ids.add(`worker-${runners.length}`);
  return fake.runner;
};

t.test("a runner that ends on its own is started again once its jobs are unlocked", async (t) => {
  const runners: FakeRunner[] = [];
  const unlocked: string[][] = [];
  const times: number[] = [];
  let unlockFailures = 2;
  const supervised = await superviseRunner({
    log,
    minDelayMs: 20,
    maxDelayMs: 1000,
    start: startFakes(runners),
    unlock: async (ids) => {
      times.push(Date.now());
      if (unlockFailures > 0) {
        unlockFailures -= 1;
        throw new Error("connect ECONNREFUSED");
      }
      unlocked.push(ids);
    },
  });
  t.same(supervised.ids(), ["worker-1"]);
  const ended = Date.now();
  runners[0]!.end(new Error("Could not completeJobs; queue is in an inconsistent state; aborting."));
  await until(() => runners.length === 2, { timeoutMs: 10_000, message: "a second runner" });
  t.same(unlocked, [["worker-1"]], "the ended runner's workers were unlocked, once the unlock went through");
  t.equal(times.length, 3, "the unlock was tried until it succeeded");
  t.ok(times[0]! - ended >= 15, "the first try waited the first delay");
  // Lower bounds only (a timer never fires early, but a loaded machine may fire it late): the
  // waits were 20, 40 and 80 ms, each twice the one before.
  t.ok(times[1]! - times[0]! >= 39, `the second try waited twice the first delay (${times[1]! - times[0]!} ms)`);
  t.ok(times[2]! - times[1]! >= 79, `the third try twice that again (${times[2]! - times[1]!} ms)`);
  t.same(supervised.ids(), ["worker-2"], "the heartbeat now reports the new runner's workers");
  t.equal(supervised.restarts(), 1);

  runners[1]!.end();
  await until(() => runners.length === 3, { timeoutMs: 10_000, message: "a third runner" });
  t.same(unlocked.at(-1), ["worker-2"], "a runner that ends without an error is started again too");
  await supervised.stop();
  t.ok(runners[2]!.stopped, "stop stops the current runner");
  t.equal(runners.length, 3, "and starts nothing more");
});

t.test("a stop that comes while a restart waits starts nothing", async (t) => {
  const runners: FakeRunner[] = [];
  let unlocks = 0;
  const supervised = await superviseRunner({
    log,
    minDelayMs: 200,
    start: startFakes(runners),
    unlock: async () => void (unlocks += 1),
  });
  runners[0]!.end(new Error("gone"));
  await supervised.stop(); // before the supervisor has seen the end: the runner refuses the stop
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.equal(runners.length, 1, "no runner was started after the stop");
  t.equal(unlocks, 0, "and nothing was unlocked by this process: the sweep frees a stopped process's workers");
});
