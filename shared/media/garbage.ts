/**
 * Storage files of deleted media. A media table's delete trigger records the storage key
 * in `media_garbage` in the deleting transaction (so a cascade from a template or an account
 * deletion is covered too); `sweepMediaGarbage` removes those files from storage and their
 * keys from the list. A key whose removal fails stays for the next sweep.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../db/pool.ts";
import type { Storage } from "../storage/storage.ts";

/**
 * Removes up to `limit` listed files from storage; returns how many keys it cleared. Two
 * sweeps at once may both remove a file, which is harmless (a removal of nothing).
 */
export async function sweepMediaGarbage(pool: DatabasePool, storage: Storage, limit = 100): Promise<number> {
  const keys = await pool.anyFirst(sql.type(z.object({ storage_key: z.string() }))`
    select storage_key from media_garbage order by created_at, storage_key limit ${limit}`);
  for (const key of keys) await storage.delete(key);
  if (keys.length) await pool.query(sql.type(z.object({}))`delete from media_garbage where storage_key = any(${sql.array([...keys], "text")})`);
  return keys.length;
}
