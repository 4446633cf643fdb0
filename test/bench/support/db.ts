/**
 * Databases for benchmarks: a fresh clone of the migrated template, dropped on exit.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { withDatabase } from "../../support/cluster.ts";

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function benchDatabase(): Promise<BenchDatabase> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  if (!adminUrl || !template) throw new Error("Run benchmarks through `npm run bench`.");
  const name = `${template}_b${randomBytes(4).toString("hex")}`;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name} template ${template}`);
  return { url: withDatabase(adminUrl, name), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** Percentile of sorted numbers (p in 0..100). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}
