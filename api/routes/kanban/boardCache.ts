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
 *
 * A board of a few thousand cards is a JSON answer of megabytes, and writing it to the socket
 * was most of a cached read's cost. Clients that accept it get the answer compressed (brotli,
 * else gzip), compressed once per entry on the first request asking for that coding (off the
 * event loop, on libuv's thread pool) and then served as it is. Each coding has its own ETag
 * (the identity ETag with `-br` / `-gzip`), and any of them matches in `If-None-Match`.
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants as zlib, gzip } from "node:zlib";
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { sql, type CommonQueryMethods, type DatabasePool } from "../../../shared/db/pool.ts";
import { accessFragment, projectAccessLevels } from "../../../shared/db/projects.ts";
import { listBoards } from "../../../shared/kanban/store.ts";
import { presentBoards } from "./load.ts";

/** At most this many projects' answers, and this many bytes of them, per process. */
export const BOARD_CACHE_ENTRIES = 256;
export const BOARD_CACHE_BYTES = 64 * 1024 * 1024;

/** Content codings of the answer, in the order they are preferred when a client accepts several. */
export const boardEncodings = ["br", "gzip"] as const;
export type BoardEncoding = (typeof boardEncodings)[number];

interface Entry {
  key: string;
  etag: string;
  body: Buffer;
  /** The body in each content coding asked for so far. */
  encoded: Map<BoardEncoding, Promise<Buffer>>;
}

/**
 * Brotli at quality 5: on a 1.5 MB board a third smaller than gzip -9, where brotli's default
 * quality 11 took about a hundred times as long (seconds); every change makes a new version
 * to compress.
 */
const compressors: Record<BoardEncoding, (body: Buffer) => Promise<Buffer>> = {
  br: async (body) =>
    ownMemory(
      await promisify(brotliCompress)(body, {
        params: { [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    ),
  gzip: async (body) => ownMemory(await promisify(gzip)(body, { level: 6 })),
};

/**
 * `buffer`, or a copy in memory of its own size when it is a view on a larger allocation.
 * zlib answers a one-chunk output as a view on its 64 KB output chunk (and `Buffer.from` a
 * short string as a view on a shared 8 KB pool slab), so a kept small answer would hold all
 * of that: a soak run saw ~65 KB held per cached project whose compressed board was 163 bytes,
 * beyond what the cache's byte bound counts.
 */
function ownMemory(buffer: Buffer): Buffer {
  if (buffer.byteLength === buffer.buffer.byteLength) return buffer;
  const copy = Buffer.allocUnsafeSlow(buffer.byteLength);
  buffer.copy(copy);
  return copy;
}

// Compressed copies are counted at a quarter of the body (they are a tenth or less of JSON this repetitive).
const cache = new LRUCache<number, Entry>({
  max: BOARD_CACHE_ENTRIES,
  maxSize: BOARD_CACHE_BYTES,
  sizeCalculation: (entry) => Math.ceil(entry.body.length * 1.25) + entry.key.length + 64,
});
const building = new Map<string, Promise<Entry>>();

/** The ids and versions of the boards of the project `projectId` names, as one string ("" without boards). */
const boardKeyOf = (projectId: ReturnType<typeof sql.fragment> | number) => sql.fragment`
  (select coalesce(string_agg(b.id::text || '.' || b.version::text, ',' order by b.id), '') from kanban_boards b where b.project_id = ${projectId})`;

/** The ids and versions of a project's boards, as one string ("" without boards). */
async function boardListKey(conn: CommonQueryMethods, projectId: number): Promise<string> {
  return conn.oneFirst(sql.type(z.object({ key: z.string() }))`select ${boardKeyOf(projectId)} as key`);
}

const accessRow = z.object({ owner_id: z.number(), access: z.enum(projectAccessLevels).nullable(), key: z.string() });

/**
 * What the board read needs before its answer, in one small statement: the caller's access to
 * the live project `projectId` (for `canViewProject`) and its boards' version key. Unlike
 * `projectForRead` it reads no owner, subscription or other project columns; null when the
 * project does not exist or is deleted. Read on every request, so a grant ends with the
 * membership, ownership or deletion that made it.
 */
export async function boardListAccess(conn: CommonQueryMethods, projectId: number, userId: number): Promise<z.infer<typeof accessRow> | null> {
  return conn.maybeOne(sql.prepared("kanban_board_list_access", accessRow)`
    select p.owner_id, ${accessFragment(userId)} as access,
      ${boardKeyOf(sql.fragment`p.id`)} as key
    from projects p where p.id = ${projectId} and p.deleted_at is null`);
}

const etagOf = (projectId: number, key: string) => `"kb${projectId}-${createHash("sha1").update(key).digest("base64url").slice(0, 22)}"`;

async function build(pool: DatabasePool, projectId: number): Promise<Entry> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.type(z.object({}))`set transaction isolation level repeatable read`);
    const key = await boardListKey(tx, projectId);
    const data = await presentBoards(tx, await listBoards(tx, projectId));
    return { key, etag: etagOf(projectId, key), body: ownMemory(Buffer.from(JSON.stringify({ data }))), encoded: new Map() };
  });
}

/**
 * The serialized answer and ETag for project `projectId` at version `key` (read by the
 * caller after authorization, or alongside it), in content coding `encoding` (none when
 * absent). Only call for a project the caller may see.
 */
export async function cachedBoardList(pool: DatabasePool, projectId: number, key: string, encoding?: BoardEncoding): Promise<{ etag: string; body: Buffer }> {
  const entry = await cachedEntry(pool, projectId, key);
  if (!encoding) return entry;
  let encoded = entry.encoded.get(encoding);
  if (!encoded) {
    encoded = compressors[encoding](entry.body);
    entry.encoded.set(encoding, encoded);
    encoded.catch(() => entry.encoded.delete(encoding)); // the next request tries again
  }
  return { etag: variantEtag(entry.etag, encoding), body: await encoded };
}

async function cachedEntry(pool: DatabasePool, projectId: number, key: string): Promise<Entry> {
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
  if (cache.get(projectId)?.key !== entry.key) cache.set(projectId, entry);
  return entry;
}

/** The ETag of the answer in a content coding: the identity ETag with `-br` or `-gzip`. */
const variantEtag = (etag: string, encoding: BoardEncoding | undefined) => (encoding ? `${etag.slice(0, -1)}-${encoding}"` : etag);

/** The ETag of the answer at `key` in `encoding`, without building it (for a 304). */
export const boardListEtag = (projectId: number, key: string, encoding?: BoardEncoding) => variantEtag(etagOf(projectId, key), encoding);

/**
 * Whether an If-None-Match header names the answer at identity ETag `etag`, in any content
 * coding (weak comparison, RFC 9110 §13.1.2): the content is the same whichever coding the
 * client's copy came in.
 */
export function etagListed(header: string, etag: string): boolean {
  if (!header) return false;
  const variants = [etag, ...boardEncodings.map((encoding) => variantEtag(etag, encoding))];
  return header.split(",").some((tag) => {
    const value = tag.trim();
    return value === "*" || variants.includes(value.replace(/^W\//, ""));
  });
}
