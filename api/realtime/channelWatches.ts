/**
 * Channels whose events the database sends only while some web process has a subscriber
 * (the operator console's `private-admin.jobs`, sql/migrations/0130). From a channel's first
 * subscriber on this process to its last, the process holds the channel's shared advisory
 * lock on its LISTEN connection; a subscriber is admitted (and hears
 * `subscription_succeeded`) only once the lock is held, so whatever it reads after that
 * either was committed before or is announced to it.
 */
import type { EventHub } from "../../shared/events/hub.ts";
import { JOB_CONSOLE_CHANNEL, JOB_CONSOLE_WATCH_KEY } from "../../shared/jobs/consoleWatch.ts";

/** Watched channels and their advisory lock keys. */
export const watchedChannels: ReadonlyMap<string, bigint> = new Map([[JOB_CONSOLE_CHANNEL, JOB_CONSOLE_WATCH_KEY]]);

interface Watch {
  key: bigint;
  ready: boolean;
  taken: Promise<void>;
}

export class ChannelWatches {
  readonly #hub: Pick<EventHub, "holdShared" | "releaseShared">;
  readonly #watching = new Map<string, Watch>();

  constructor(hub: Pick<EventHub, "holdShared" | "releaseShared">) {
    this.#hub = hub;
  }

  /** `channel` got its first subscriber on this process: hold its lock if it is watched. */
  start(channel: string): void {
    const key = watchedChannels.get(channel);
    if (key === undefined || this.#watching.has(channel)) return;
    const watch: Watch = { key, ready: false, taken: Promise.resolve() };
    // holdShared never rejects: a lock it could not take is taken again on reconnect.
    watch.taken = this.#hub.holdShared(key).then(() => {
      watch.ready = true;
    });
    this.#watching.set(channel, watch);
  }

  /** `channel` lost its last subscriber on this process: give its lock up. */
  stop(channel: string): void {
    const watch = this.#watching.get(channel);
    if (!watch) return;
    this.#watching.delete(channel);
    this.#hub.releaseShared(watch.key);
  }

  /** Whether subscribers of `channel` may be admitted: its lock is held, or it is not watched. */
  ready(channel: string): boolean {
    return this.#watching.get(channel)?.ready ?? true;
  }

  /** Runs `admit` once `channel` is ready (at once when it is). */
  whenReady(channel: string, admit: () => void): void {
    const watch = this.#watching.get(channel);
    if (!watch || watch.ready) admit();
    else void watch.taken.then(admit);
  }

  /** Gives every lock up (the server closes). */
  close(): void {
    for (const channel of [...this.#watching.keys()]) this.stop(channel);
  }
}
