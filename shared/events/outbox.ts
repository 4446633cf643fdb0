/**
 * Internal events (spec "Internal events": ProjectUpdated, ProjectLocked, ProjectUnlocked,
 * CodeGenerated, DatabaseParsed, DeploymentCompleted), written to `outbox_events` in the
 * transaction of the change they report, so a consumer (outbound webhooks) sees exactly
 * the changes that committed.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const internalEvents = ["ProjectUpdated", "ProjectLocked", "ProjectUnlocked", "CodeGenerated", "DatabaseParsed", "DeploymentCompleted"] as const;
export type InternalEvent = (typeof internalEvents)[number];

export interface OutboxEvent {
  type: InternalEvent;
  projectId: number | null;
  actorId: number | null;
  payload?: Record<string, unknown>;
}

/** Records an event; returns its id. */
export async function recordEvent(conn: CommonQueryMethods, event: OutboxEvent): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into outbox_events (event_type, project_id, actor_id, payload)
    values (${event.type}, ${event.projectId}, ${event.actorId}, ${sql.jsonb((event.payload ?? {}) as never)})
    returning id`);
}
