/**
 * The board list of a project (`GET /projects/{p}/kanban`), served from a per-process cache
 * of its serialized JSON. Every board carries a version that triggers bump in the same
 * transaction as any change to what the read shows (sql/migrations/0032); the project's
 * answer is keyed by its boards' ids and versions, read from the database on every request,
 * so an answer is never served after a change committed by this or any other process. The
 * answer is the same for every viewer who may see the project (authorization runs first),
 * so one entry per project serves them all. The key also makes the ETag.
 *
 * A miss builds the answer in one REPEATABLE READ snapshot together with the key it is
 * stored under, so an entry never holds state older than its key; concurrent misses for
 * one key share one build. The cache is an LRU bounded by entries and bytes.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { sql, type CommonQueryMethods, type DatabasePool } from "../../../shared/db/pool.ts";
import { listBoards } from "../../../shared/kanban/store.ts";
import { presentBoards } from "./load.ts";

/** At most this many projects' answers, and this many bytes of them, per process. */
export const BOARD_CACHE_ENTRIES = 256;
export const BOARD_CACHE_BYTES = 64 * 1024 * 1024;

interface Entry {
  key: string;
  etag: string;
  body: Buffer;
}

const cache = new LRUCache<number, Entry>({ max: BOARD_CACHE_ENTRIES, maxSize: BOARD_CACHE_BYTES, sizeCalculation: (entry) => entry.body.length + entry.key.length + 64 });
const building = new Map<string, Promise<Entry>>();

/** The ids and versions of a project's boards, as one string ("" without boards). */
export async function boardListKey(conn: CommonQueryMethods, projectId: number): Promise<string> {
  return conn.oneFirst(sql.type(z.object({ key: z.string() }))`
    select coalesce(string_agg(id::text || '.' || version::text, ',' order by id), '') as key from kanban_boards where project_id = ${projectId}`);
}

const etagOf = (projectId: number, key: string) => `"kb${projectId}-${createHash("sha1").update(key).digest("base64url").slice(0, 22)}"`;

async function build(pool: DatabasePool, projectId: number): Promise<Entry> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.type(z.object({}))`set transaction isolation level repeatable read`);
    const key = await boardListKey(tx, projectId);
    const data = await presentBoards(tx, await listBoards(tx, projectId));
    return { key, etag: etagOf(projectId, key), body: Buffer.from(JSON.stringify({ data })) };
  });
}

/**
 * The serialized answer and ETag for project `projectId` at version `key` (read by the
 * caller after authorization, or alongside it). Only call for a project the caller may see.
 */
export async function cachedBoardList(pool: DatabasePool, projectId: number, key: string): Promise<{ etag: string; body: Buffer }> {
  const hit = cache.get(projectId);
  if (hit && hit.key === key) return hit;
  const flight = `${projectId}:${key}`;
  let pending = building.get(flight);
  if (!pending) {
    pending = build(pool, projectId).finally(() => building.delete(flight));
    building.set(flight, pending);
  }
  // The build may have seen a later version than `key`: its own key and ETag say which.
  const entry = await pending;
  cache.set(projectId, entry);
  return entry;
}

/** The ETag of the answer at `key`, without building it (for a 304). */
export const boardListEtag = etagOf;

/** Whether an If-None-Match header names `etag` (weak comparison, RFC 9110 §13.1.2). */
export function etagListed(header: string, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const value = tag.trim();
    return value === "*" || value.replace(/^W\//, "") === etag;
  });
}
