/**
 * The outbox consumer of webhooks: `CodeGenerated` events not yet processed become one
 * delivery per active `code_generated` webhook of their project, and are marked processed
 * in the same transaction. Deliveries are unique per (webhook, event), so a run that
 * repeats after a crash delivers nothing twice.
 *
 * A deleted project's events are marked processed and deliver nothing.
 *
 * When it runs: a trigger on outbox_events (migration 0008) adds this job, under one job
 * key, in the transaction that records a CodeGenerated event, so deliveries leave within a
 * poll interval; the per-minute cron tick catches anything else.
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import { scheduleDelivery, webhookColumns, webhookRow } from "./store.ts";

/** Events handled per transaction. */
const BATCH = 100;

const eventRow = z.object({ id: z.number(), project_id: z.number().nullable(), payload: z.record(z.string(), z.unknown()), created_at: z.date() });

/** Processes every pending CodeGenerated event; returns how many events and deliveries. */
export async function dispatchCodeGenerated(pool: DatabasePool): Promise<{ events: number; deliveries: number }> {
  let events = 0;
  let deliveries = 0;
  for (;;) {
    const handled = await pool.transaction(async (tx) => {
      const rows = await tx.any(sql.type(eventRow)`
        select id, project_id, payload, created_at from outbox_events
        where processed_at is null and event_type = 'CodeGenerated'
        order by id limit ${BATCH} for update skip locked`);
      for (const event of rows) {
        if (event.project_id === null) continue;
        const hooks = await tx.any(sql.type(webhookRow)`
          select ${webhookColumns} from webhooks where project_id = ${event.project_id} and event_type = 'code_generated' and is_active
          and exists (select 1 from projects p where p.id = webhooks.project_id and p.deleted_at is null) order by id`);
        const generation = event.payload.code_generation_id;
        for (const hook of hooks) {
          const id = await scheduleDelivery(tx, hook, `outbox:${event.id}`, {
            event: "code_generated",
            project_id: event.project_id,
            code_generation_id: typeof generation === "number" ? generation : null,
            timestamp: event.created_at.toISOString(),
          });
          if (id !== null) deliveries += 1;
        }
      }
      if (rows.length) {
        await tx.query(sql.type(ignoredRow)`update outbox_events set processed_at = now() where id = any(${sql.array(rows.map((r) => r.id), "int8")})`);
      }
      return rows.length;
    });
    events += handled;
    if (handled < BATCH) return { events, deliveries };
  }
}
