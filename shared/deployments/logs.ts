/**
 * Deployment log rows and the realtime events of a deployment (spec "Channel events"):
 * `LogAdded` {log} for every row, `DeploymentCompleted` {status} at the end, both on
 * channel `private-deployment.{id}`. A row and its event are written in one transaction,
 * and the sink is awaited entry by entry, so subscribers see the rows in their order.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import type { Scrubber } from "../deploy/scrub.ts";
import type { DeployLog, LogEntry } from "../deploy/types.ts";
import { publish } from "../events/publish.ts";

export const logTypes = ["info", "success", "warning", "error"] as const;

export const logRow = z.object({
  id: z.number(),
  deployment_id: z.number(),
  type: z.enum(logTypes),
  message: z.string(),
  metadata: z.unknown(),
  task_id: z.string().nullable(),
  created_at: z.date(),
});
export type LogRow = z.infer<typeof logRow>;

export const logColumns = sql.fragment`id, deployment_id, type, message, metadata, task_id, created_at`;

/** The deployment log resource of the spec. */
export const logResource = z.object({
  id: z.number(),
  deployment_id: z.number(),
  type: z.enum(logTypes),
  message: z.string(),
  metadata: z.unknown(),
  task_id: z.string().nullable(),
  created_at: z.string(),
});
export type LogResource = z.infer<typeof logResource>;

/** A log row as the API and `LogAdded` present it. */
export const presentLog = (row: LogRow): LogResource => ({ ...row, metadata: row.metadata ?? null, created_at: row.created_at.toISOString() });

/** Filters of a deployment's log list. */
export interface LogFilter {
  /** Only rows after this id (a live view resuming after a reconnect). */
  afterId?: number | undefined;
  /** Only rows of these types (all when empty or absent). */
  types?: readonly LogRow["type"][] | undefined;
}

/** The log rows of deployment `deploymentId`, oldest first, filtered. */
export async function listLogs(conn: CommonQueryMethods, deploymentId: number, filter: LogFilter = {}): Promise<readonly LogRow[]> {
  const types = filter.types?.length ? sql.fragment`and type = any(${sql.array([...filter.types], "text")})` : sql.fragment``;
  return conn.any(sql.type(logRow)`
    select ${logColumns} from deployment_logs
    where deployment_id = ${deploymentId} and id > ${filter.afterId ?? 0} ${types}
    order by id`);
}

/** One log row, or null. */
export async function findLog(conn: CommonQueryMethods, id: number): Promise<LogRow | null> {
  return conn.maybeOne(sql.type(logRow)`select ${logColumns} from deployment_logs where id = ${id}`);
}

/** The realtime channel of a deployment. */
export const deploymentChannel = (id: number) => `private-deployment.${id}`;

/** Longest message kept; deployer messages are short, a remote error can be chatty. */
const MAX_MESSAGE = 4000;

/** Inserts one log row and publishes `LogAdded`, in one transaction. */
export async function appendLog(pool: DatabasePool, deploymentId: number, taskId: string | null, entry: LogEntry): Promise<LogRow> {
  const message = entry.message.length > MAX_MESSAGE ? `${entry.message.slice(0, MAX_MESSAGE - 1)}…` : entry.message;
  return pool.transaction(async (tx) => {
    const row = await tx.one(sql.type(logRow)`
      insert into deployment_logs (deployment_id, type, message, metadata, task_id)
      values (${deploymentId}, ${entry.type}, ${message}, ${entry.metadata ? sql.jsonb(entry.metadata as never) : null}, ${taskId})
      returning ${logColumns}`);
    await publish(tx, { channel: deploymentChannel(deploymentId), event: "LogAdded", data: { log: presentLog(row) } });
    return row;
  });
}

/** The deployers' log sink for a deployment: every entry scrubbed (again), stored and published. */
export function deploymentLogSink(pool: DatabasePool, deploymentId: number, taskId: string | null, scrubber: Scrubber): DeployLog {
  return async (entry) => {
    await appendLog(pool, deploymentId, taskId, {
      type: entry.type,
      message: scrubber.text(entry.message),
      ...(entry.metadata ? { metadata: scrubber.value(entry.metadata) } : {}),
    });
  };
}

/** Publishes `DeploymentCompleted` {status, deployment_id} on `conn` (inside the transaction that finished it). */
export async function publishCompleted(conn: CommonQueryMethods, deploymentId: number, status: string): Promise<void> {
  await publish(conn, { channel: deploymentChannel(deploymentId), event: "DeploymentCompleted", data: { status, deployment_id: deploymentId } });
}
