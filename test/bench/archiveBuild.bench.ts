/**
 * Archive build benchmark, the service's own path (issue "Templates and code generation":
 * "archive build throughput (MB/s) for 10,000 files … archive memory flat in the number of
 * files"): `buildArchive` reads a code generation's files from `code_generation_files` in
 * batches, zips them and writes the zip into PostgreSQL storage, exactly as the
 * `archives__build` job does. Each build runs in its own process so its memory figures are
 * its own; 2,000 and 10,000 files show whether memory grows with the file count.
 *
 * Baseline: the system `zip` over the same files on disk (no database on its side), so the
 * ratio also prices reading the files from PostgreSQL and storing the zip there.
 *
 * Memory, three readings. With V8's default heap sizing the peak RSS grows with the volume of
 * garbage a build makes (row copies, socket reads, output blocks), because V8 defers major
 * collections while the heap may grow. A second run with a 32 MB old space shows that a
 * build completes in a small heap; its peak RSS is reported as it is. Whether a build
 * *retains* memory in proportion to its files, the figure the target judges, is read in a
 * third run: a full collection (`gc()`) each time a chunk of the zip reaches storage, then
 * the memory still live (V8's heap in use plus memory outside it: Buffers, ArrayBuffers),
 * the highest reading above the same reading before the build. The last readings fall
 * while the central directory is written, when every entry's record and path is held.
 * (Subtracting the two sizes' peak RSS instead measured where V8 was in its collection
 * cycle: a 2,000-file build ends inside its first one, a 10,000-file build spans several.)
 */
import { spawnSync } from "node:child_process";
import type { Readable } from "node:stream";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { z } from "zod";
import { ignoredRow, sql, createPool } from "../../shared/db/pool.ts";
import { buildArchive } from "../../shared/generations/archive.ts";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import type { PutOptions, StoredFileInfo } from "../../shared/storage/storage.ts";
import { buildProject, buildUser } from "../support/factories.ts";
import { sourceFiles } from "../shared/archive/support/sourceFiles.ts";
import { benchDatabase } from "./support/db.ts";
import { limitFigure, ratioFigure, report } from "./report.ts";
import { profileFlags } from "./support/profile.ts";

const SIZES = [2_000, 10_000] as const;
const ROUNDS = 3;
const mb = (bytes: number) => bytes / 1e6;
/** V8 flags of the capped-heap runs: a heap this small must hold whatever a build retains. */
const CAPPED_HEAP = ["--max-old-space-size=32", "--max-semi-space-size=2"];

interface Build {
  ms: number;
  /** Peak RSS above the RSS just before the build (MB). */
  rssGrowth: number;
  /** With `--retained`: the most memory live after a full collection, above that before the build (MB). */
  retained?: number;
  zipBytes: number;
}

/** Memory live after a full collection: V8's heap in use and memory outside it (`external` includes Buffers). */
function liveAfterGc(): number {
  globalThis.gc!();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/** Storage that reads the memory still live (after a full collection) as each chunk of the content arrives, and once it has all arrived. */
class SampledStorage extends PostgresStorage {
  peakLive = 0;

  override put(key: string, content: Buffer | Readable | AsyncIterable<Buffer>, options?: PutOptions): Promise<StoredFileInfo> {
    const sample = () => (this.peakLive = Math.max(this.peakLive, liveAfterGc()));
    const sampled = async function* () {
      for await (const chunk of Buffer.isBuffer(content) ? [content] : (content as AsyncIterable<Buffer>)) {
        sample();
        yield chunk;
      }
      sample();
    };
    return super.put(key, sampled(), options);
  }
}

const childArg = process.argv.find((a) => a.startsWith("--child="));
if (childArg) await child(Number(childArg.slice(8)), process.argv.includes("--retained"));
else await main();

/**
 * One build of generation `generationId` in this process; prints its Build as JSON. With
 * `retained`, a full collection and a reading of live memory as each chunk of the zip reaches
 * storage (slower: its time and peak are not figures).
 */
async function child(generationId: number, retained: boolean): Promise<void> {
  const pool = await createPool(process.env.BENCH_DATABASE_URL!, { maxPoolSize: 4 });
  // The worker's job-queue pool, which the job reads the files with (a binary COPY).
  const pgPool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL!, max: 2 });
  const storage = retained ? new SampledStorage(pool) : new PostgresStorage(pool);
  const startLive = retained ? liveAfterGc() : 0;
  globalThis.gc?.();
  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
  const started = performance.now();
  const result = await buildArchive({ pool, pgPool, storage }, generationId, 1);
  const ms = performance.now() - started;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1000);
  await pool.end();
  await pgPool.end();
  if (result.status !== "built") throw new Error(`build ended ${result.status}`);
  const run: Build = { ms, rssGrowth: mb(peakRss - startRss), zipBytes: result.size ?? 0 };
  if (storage instanceof SampledStorage) run.retained = mb(storage.peakLive - startLive);
  process.stdout.write(`${JSON.stringify(run)}\n`);
}

function runChild(url: string, generationId: number, flags: string[] = [], args: string[] = []): Build {
  const self = fileURLToPath(import.meta.url);
  const res = spawnSync(process.execPath, ["--expose-gc", ...profileFlags(), ...flags, self, `--child=${generationId}`, ...args], {
    encoding: "utf8",
    env: { ...process.env, BENCH_DATABASE_URL: url },
  });
  if (res.status !== 0) throw new Error(`build child failed: ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split("\n").pop()!) as Build;
}

/** Seconds of `zip -q -r` over `count` files written to a temporary tree. */
async function zipSeconds(count: number): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), "archive-build-bench-"));
  try {
    for (const file of sourceFiles(count)) {
      const target = path.join(dir, "tree", file.path);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, file.content);
    }
    let best = Infinity;
    for (let round = 0; round < ROUNDS; round += 1) {
      const started = performance.now();
      const res = spawnSync("zip", ["-q", "-r", path.join(dir, `out${round}.zip`), "."], { cwd: path.join(dir, "tree") });
      if (res.status !== 0) throw new Error(`zip failed: ${String(res.stderr)}`);
      best = Math.min(best, performance.now() - started);
    }
    return best / 1000;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const pool = await createPool(db.url);
  try {
    const owner = await buildUser(pool);
    const project = await buildProject(pool, owner.id);
    const figures = [];
    const builds = new Map<number, Build>();
    const capped = new Map<number, Build>();
    const retained = new Map<number, number>();
    const inputBytes = new Map<number, number>();
    for (const count of SIZES) {
      const generationId = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into code_generations (project_id, user_id) values (${project}, ${owner.id}) returning id`);
      let bytes = 0;
      let batch: { path: string; content: Buffer }[] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        await pool.query(sql.type(ignoredRow)`
          insert into code_generation_files (code_generation_id, path, content, size)
          select ${generationId}, f.path, f.content, octet_length(f.content)
          from unnest(${sql.array(batch.map((f) => f.path), "text")}::text[], ${sql.array(batch.map((f) => f.content), "bytea")}::bytea[]) as f(path, content)`);
        batch = [];
      };
      for (const file of sourceFiles(count)) {
        const content = Buffer.from(file.content);
        bytes += content.length;
        batch.push({ path: file.path, content });
        if (batch.length === 500) await flush();
      }
      await flush();
      inputBytes.set(count, bytes);
      await pool.query(sql.type(ignoredRow)`insert into project_archives (code_generation_id) values (${generationId})`);
      // Back to "building" before each run, as a fresh generation's archive is, so it builds anew.
      const again = () => pool.query(sql.type(ignoredRow)`update project_archives set status = 'building', file_path = null, file_size = null where code_generation_id = ${generationId}`);
      const runs: Build[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        await again();
        runs.push(runChild(db.url, generationId));
      }
      await again();
      capped.set(count, runChild(db.url, generationId, CAPPED_HEAP));
      await again();
      retained.set(count, runChild(db.url, generationId, [], ["--retained"]).retained!);
      builds.set(count, {
        ms: Math.min(...runs.map((r) => r.ms)),
        rssGrowth: Math.max(...runs.map((r) => r.rssGrowth)),
        zipBytes: runs[0]!.zipBytes,
      });
    }
    const large = builds.get(10_000)!;
    const small = builds.get(2_000)!;
    const largeMb = mb(inputBytes.get(10_000)!);
    const ours = largeMb / (large.ms / 1000);
    const hasZip = spawnSync("zip", ["-v"]).status === 0;
    if (hasZip) {
      const zip = largeMb / (await zipSeconds(10_000));
      figures.push(ratioFigure("archive.build_throughput_vs_zip", ours, zip, "MB/s", 0.7, `archives__build path: files read from PostgreSQL, zip stored in PostgreSQL; ${largeMb.toFixed(1)} MB in, zip ${mb(large.zipBytes).toFixed(1)} MB; baseline system zip from disk`));
    } else {
      process.stderr.write("archive build bench: the system `zip` command is not on PATH; throughput shown without its baseline\n");
      figures.push(limitFigure("archive.build_throughput", ours, "MB/s", Infinity, null, "archives__build path"));
    }
    figures.push(limitFigure("archive.build_memory_10k", large.rssGrowth, "MB", 64, null, "peak RSS above the process before the build, 10,000 files, default heap"));
    figures.push(limitFigure("archive.build_memory_2k", small.rssGrowth, "MB", 64, null, "the same with 2,000 files (the difference is deferred garbage collection)"));
    const cappedLarge = capped.get(10_000)!.rssGrowth;
    const cappedSmall = capped.get(2_000)!.rssGrowth;
    figures.push(limitFigure("archive.build_memory_10k_capped_heap", cappedLarge, "MB", 64, null, `with a 32 MB old space (2,000 files: ${cappedSmall.toFixed(1)} MB)`));
    const retainedLarge = retained.get(10_000)!;
    const retainedSmall = retained.get(2_000)!;
    figures.push(
      limitFigure(
        "archive.build_memory_growth_2k_to_10k",
        retainedLarge - retainedSmall,
        "MB",
        8,
        null,
        `retained memory: 5x the files must not grow it; live after a full collection as each zip chunk reaches storage, most above before the build (10,000 files ${retainedLarge.toFixed(1)} MB, 2,000 ${retainedSmall.toFixed(1)} MB; capped-heap peak RSS grew ${(cappedLarge - cappedSmall).toFixed(1)} MB)`,
      ),
    );
    report("Archive build through the service path (10,000 generated files)", figures);
  } finally {
    await pool.end();
    await db.drop();
  }
}
