/**
 * Waiting for a job to finish without polling: subscribe to the job's channel on the
 * process's event hub first, then read the record (so a completion between the two cannot
 * be missed), then sleep until `JobCompleted` arrives or the time is up. After a LISTEN
 * reconnect the record is read again, since a notification may have been lost meanwhile.
 */
import type { DatabasePool } from "../db/pool.ts";
import type { EventHub } from "../events/hub.ts";
import { jobChannel } from "./events.ts";
import { findJob, isFinished, type JobRow } from "./records.ts";

/**
 * Resolves with the finished job record, or with the latest unfinished one when `timeoutMs`
 * passes first.
 */
export async function awaitJob(pool: DatabasePool, hub: EventHub, id: number, timeoutMs: number): Promise<JobRow> {
  let wake: () => void = () => {};
  const woken = () => new Promise<void>((resolve) => (wake = resolve));
  let signal = woken();
  const offEvent = hub.on(jobChannel(id), (event) => {
    if (event.event === "JobCompleted") wake();
  });
  const offReconnect = hub.onReconnect(() => wake());
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  try {
    for (;;) {
      const row = await findJob(pool, id);
      if (!row) throw new Error(`Job ${id} does not exist`);
      if (isFinished(row.status)) return row;
      const outcome = await Promise.race([signal.then(() => "woken" as const), deadline]);
      if (outcome === "timeout") return (await findJob(pool, id)) ?? row;
      signal = woken();
    }
  } finally {
    clearTimeout(timer);
    offEvent();
    offReconnect();
  }
}
