/**
 * What the job-layer tests share: a fresh database with the process's LISTEN connection and
 * event hub (as a web process has), every realtime event it receives, and a user to own jobs.
 */
import type { Test } from "tap";
import type { UserRow } from "../../shared/db/users.ts";
import { EventHub } from "../../shared/events/hub.ts";
import { PgListener } from "../../shared/events/listener.ts";
import type { RealtimeEvent } from "../../shared/events/publish.ts";
import { createLogger } from "../../shared/logger.ts";
import { freshDatabase, type TestDatabase } from "./db.ts";
import { buildUser } from "./factories.ts";

export interface JobsWorld {
  db: TestDatabase;
  hub: EventHub;
  /** Every event the hub has dispatched so far, in order. */
  events: RealtimeEvent[];
  user: UserRow;
}

export async function jobsWorld(t: Test): Promise<JobsWorld> {
  const db = await freshDatabase(t);
  const log = createLogger("silent");
  const listener = new PgListener(db.url, log);
  await listener.start();
  const hub = new EventHub(listener, db.pool, log);
  hub.start();
  const events: RealtimeEvent[] = [];
  hub.onAny((event) => events.push(event));
  t.teardown(async () => {
    hub.stop();
    await listener.stop();
  });
  return { db, hub, events, user: await buildUser(db.pool) };
}
