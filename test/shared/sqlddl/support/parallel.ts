/**
 * Runs independent engine checks a few at a time inside one tap test: each lane gets its
 * own resources (say, a database) once, and its cases run one after the other on them.
 * Creating a database per case serialises on the template and keeps a file past a minute.
 */
import type { Test } from "tap";

/** Runs `check` for every case in `width` lanes, each case in its own subtest. */
export async function inParallel<C extends { name: string }, L>(
  t: Test,
  cases: C[],
  width: number,
  lane: () => Promise<L>,
  check: (t: Test, c: C, lane: L) => Promise<void>,
): Promise<void> {
  let next = 0;
  const run = async () => {
    const resources = await lane();
    while (next < cases.length) {
      const c = cases[next++]!;
      await t.test(c.name, (t) => check(t, c, resources));
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, cases.length) }, run));
}
