/**
 * A file stored just before a crash, with no row naming it, is removed by media__sweep once
 * it is a day old; a young file (an upload whose row is not committed yet), a file a row
 * names and a file with an expiry (the expiry sweep's) stay.
 */
import sharp from "sharp";
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { createLogger } from "../../shared/logger.ts";
import { ORPHAN_MIN_AGE_MS } from "../../shared/storage/orphans.ts";
import type { TaskContext } from "../../workers/context.ts";
import sweep from "../../workers/tasks/media__sweep.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";

const log = createLogger("silent");
const HOUR = 3600_000;

function contextOf(app: TestApp): TaskContext {
  return {
    deps: { config: app.config, pool: app.pool, pgPool: app.db.pgPool, log, storage: app.deps.storage },
    jobId: null,
    attempt: 1,
    maxAttempts: 1,
    log,
    signal: new AbortController().signal,
    progress: async () => {},
  };
}

const storedKeys = (pool: DatabasePool) => pool.anyFirst(sql.type(z.object({ key: z.string() }))`select key from stored_files order by key`);
/** Dates a file back, as if stored `msAgo` before now. */
const age = (pool: DatabasePool, key: string, msAgo: number) =>
  pool.query(sql.type(z.object({}))`update stored_files set created_at = now() - make_interval(secs => ${msAgo / 1000}) where key = ${key}`);

t.test("media__sweep removes day-old stored files no row references, and nothing else", async (t) => {
  const app = await startTestApp(t);
  const storage = app.deps.storage;
  const owner = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  const template = await buildTemplate(app.pool, { projectId: project }, owner.user.id);

  // A real upload: its file is referenced by its media row.
  const form = new FormData();
  form.append("media_type", "image");
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#0a78c8" } }).png().toBuffer();
  form.append("file", new Blob([new Uint8Array(png)], { type: "image/png" }), "shot.png");
  const uploaded = await request(app.url, "POST", `/api/projects/${project}/templates/${template}/media`, { token: owner.token, body: form, raw: true });
  t.equal(uploaded.status, 201, uploaded.text);
  const [mediaKey] = await storedKeys(app.pool);

  // Files stored directly, as an upload that crashed before its row leaves them.
  await storage.put("media/templates/999/crashed.png", Buffer.from("orphan"), { contentType: "image/png" });
  await storage.put("attachments/comments/0123456789abcdef", Buffer.alloc(1024 * 1024 + 5, 1)); // two chunks
  await storage.put("media/templates/999/in-flight.png", Buffer.from("young")); // its row may commit any moment
  await storage.put("archives/generation-1-x.zip", Buffer.from("zip"), { expiresAt: new Date(Date.now() + HOUR) });
  for (const key of [mediaKey!, "media/templates/999/crashed.png", "attachments/comments/0123456789abcdef", "archives/generation-1-x.zip"]) {
    await age(app.pool, key, ORPHAN_MIN_AGE_MS + HOUR);
  }
  await age(app.pool, "media/templates/999/in-flight.png", ORPHAN_MIN_AGE_MS - HOUR);

  const result = (await sweep.run({}, contextOf(app))) as { removed: number; orphans: number };
  t.same(result, { removed: 0, orphans: 2 });
  t.same(await storedKeys(app.pool), ["archives/generation-1-x.zip", mediaKey, "media/templates/999/in-flight.png"].sort(), "only the day-old unreferenced files went");
  const chunks = await app.pool.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from stored_file_chunks c where not exists (select 1 from stored_files f where f.id = c.file_id)`);
  t.equal(chunks, 0, "their chunks went with them");
  const served = await request(app.url, "GET", `/api/template-media/${uploaded.body.media.id}`, { raw: true });
  t.equal(served.status, 200, "the uploaded media is still served");

  t.same(await sweep.run({}, contextOf(app)), { removed: 0, orphans: 0 }, "a second sweep finds nothing");
});
