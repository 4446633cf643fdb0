/**
 * The execution-bound job of the worker-scaling benchmark: a fixed amount of CPU work per
 * job (a pure-JS integer loop of a set number of iterations, calibrated once per run to a
 * few milliseconds), so a job costs the same work whether its process gets a core to
 * itself or shares one. Waiting on a clock would hide CPU contention; fixed work shows it.
 */
import { z } from "zod";
import { defineJobKind } from "../../../shared/jobs/kind.ts";
import { defineTask } from "../../../workers/defineTask.ts";

export const busyKind = defineJobKind("bench__busy", z.object({ iterations: z.number().int().positive() }), { maxAttempts: 1 });

/** Spins through `iterations` rounds of xorshift; returns the state so the loop is not optimised away. */
export function busyWork(iterations: number): number {
  let x = 2463534242;
  for (let i = 0; i < iterations; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  return x >>> 0;
}

/** Iterations of `busyWork` that take about `ms` milliseconds in this process right now. */
export function calibrate(ms: number): number {
  busyWork(5_000_000); // warm up the optimiser
  const probe = 20_000_000;
  let best = Infinity;
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    busyWork(probe);
    best = Math.min(best, performance.now() - started);
  }
  return Math.max(1, Math.round((probe / best) * ms));
}

export const busyTask = defineTask(busyKind, async (payload) => ({ pid: process.pid, state: busyWork(payload.iterations) }));
