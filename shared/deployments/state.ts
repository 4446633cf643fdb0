/**
 * The deployers' per-deployment state kept in `deployments.state` (jsonb of strings): read
 * once when a run starts, every write committed at once, so an attempt after a crash
 * skips the steps an earlier one finished.
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import type { DeployState } from "../deploy/types.ts";

/** The state of deployment `id`, backed by its row. */
export async function deploymentState(pool: DatabasePool, id: number): Promise<DeployState> {
  const stored = await pool.oneFirst(sql.type(z.object({ state: z.record(z.string(), z.unknown()) }))`select state from deployments where id = ${id}`);
  const entries = new Map(Object.entries(stored).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  return {
    async get(key) {
      return entries.get(key);
    },
    async set(key, value) {
      await pool.query(sql.type(ignoredRow)`
        update deployments set state = state || jsonb_build_object(${key}::text, ${value}::text), updated_at = now() where id = ${id}`);
      entries.set(key, value);
    },
  };
}
