/**
 * Stored files no row references. An upload stores its file first and commits the row that
 * names it second (a file must be readable before anything points at it); a crash, a killed
 * process or a lost connection between the two leaves a file nothing names and no delete
 * trigger lists (shared/media/garbage.ts covers files whose row was deleted). Files with an
 * expiry are the expiry sweep's (workers/tasks/storage__sweep.ts); this finds the others.
 *
 * Safety: a file is taken only when it is older than ORPHAN_MIN_AGE_MS by the database clock
 * and, in the same statement, no row names it. A row is committed within the request or job
 * attempt that stored its file (request and job timeouts are minutes), so a day is far past
 * any upload in flight; a file whose row is still uncommitted is young and skipped. A file
 * that a put is replacing or a removal holds is skipped too (skip locked).
 *
 * Glossary: an orphan is a complete stored file without expiry that no referencing column
 * below names.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../db/pool.ts";

/** How old an unreferenced file must be before it is removed. */
export const ORPHAN_MIN_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Whether a row names the file `f.key`: every column that holds a storage key, and the media
 * sweep's own list (a key there is removed by that sweep). Add a column here with the table.
 */
const referenced = sql.fragment`
  exists (select 1 from attachments r where r.storage_key = f.key)
  or exists (select 1 from template_media r where r.storage_key = f.key)
  or exists (select 1 from store_template_media r where r.storage_key = f.key)
  or exists (select 1 from project_report_images r where r.storage_key = f.key)
  or exists (select 1 from seller_payouts r where r.sepa_storage_key = f.key)
  or exists (select 1 from project_archives r where r.file_path = f.key)
  or exists (select 1 from media_garbage r where r.storage_key = f.key)`;

/** One pass over the next `limit` candidate files (by id, after `afterId`). */
export interface OrphanBatch {
  /** Files removed. */
  removed: number;
  /** The highest id looked at, to continue after; null when no candidate was left. */
  lastId: number | null;
}

/**
 * Looks at up to `limit` files without expiry after id `afterId` and removes those older than
 * `minAgeMs` that no row references (their chunks go with them). Walking by id keeps each
 * statement short however many referenced files there are.
 */
export async function deleteOrphanBatch(pool: DatabasePool, afterId: number, limit = 500, minAgeMs = ORPHAN_MIN_AGE_MS): Promise<OrphanBatch> {
  const row = await pool.one(sql.type(z.object({ removed: z.number(), last_id: z.number().nullable() }))`
    with candidates as (
      select id from stored_files where expires_at is null and id > ${afterId} order by id limit ${limit}
    ), orphans as (
      select f.id from stored_files f join candidates c on c.id = f.id
      where f.expires_at is null and f.complete
        and f.created_at < now() - make_interval(secs => ${minAgeMs / 1000})
        and not (${referenced})
      for update of f skip locked
    ), gone as (delete from stored_files f using orphans o where f.id = o.id returning 1)
    select (select count(*)::int from gone) as removed, (select max(id) from candidates) as last_id`);
  return { removed: row.removed, lastId: row.last_id };
}
