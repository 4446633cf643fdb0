/**
 * Archive benchmark (BENCHMARKS.md, "Archive"): a zip of 10,000 generated source files
 * (~20 MB) by our streaming writer, against the system `zip` command and yazl on the same
 * files in the same run. The files are written to a temporary folder first; `zip -q -r` is
 * timed alone, and each library runs in its own process (this file with `--child=…`) that
 * reads the files as it archives them, so its memory figures are its own. Contenders take
 * turns, best of three, because the machine is shared.
 *
 * Memory is the peak RSS of that process minus its RSS just before archiving: an idle Node
 * process that has loaded TypeScript modules already holds ~85 MB (type stripping), which no
 * archiver can go below. Whether memory grows with the file count is read apart from the
 * peaks, in one more run of our writer per size (2,000 and 10,000 files): a full collection
 * (`gc()`) as each chunk of the zip leaves the writer, then the memory still live (V8's heap
 * in use plus memory outside it: Buffers, ArrayBuffers), the highest reading above the same
 * reading before archiving. The two sizes' peak RSS differ by where V8 is in sizing its heap
 * (the 10,000-file run doubles its young generation, the 2,000-file run ends just short of
 * it), not by memory kept per file.
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import yazl from "yazl";
import { createZipStream, type ZipEntryInput } from "../../shared/archive/zipWriter.ts";
import { sourceFiles } from "../shared/archive/support/sourceFiles.ts";
import { limitFigure, ratioFigure, report, type Figure } from "./report.ts";
import { profileFlags } from "./support/profile.ts";

type Kind = "ours" | "ours-async" | "ours-memory" | "yazl";

/** What one child run reports. */
interface Run {
  ms: number;
  /** Peak resident set size of the whole process (MB). */
  peakRss: number;
  /** RSS just before archiving started, after imports (MB). */
  startRss: number;
  /** Highest V8 heap in use seen while archiving (MB). */
  peakHeap: number;
  archiveBytes: number;
  /** With `--retained`: the most memory live after a full collection, above that before archiving (MB). */
  retained?: number;
}

const fileCount = 10_000;
const smallCount = 2_000;
const mb = (bytes: number) => bytes / 1e6;

const childArg = process.argv.find((a) => a.startsWith("--child="));
if (childArg) await child(childArg.slice(8) as Kind, arg("--dir"), Number(arg("--files")), process.argv.includes("--retained"));
else await main();

function arg(name: string): string {
  const found = process.argv.find((a) => a.startsWith(`${name}=`));
  if (!found) throw new Error(`missing ${name}=`);
  return found.slice(name.length + 1);
}

/** Memory live after a full collection: V8's heap in use and memory outside it (`external` includes Buffers). */
function liveAfterGc(): number {
  globalThis.gc!();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/**
 * One archive in this process; prints its Run as JSON. With `retained` (our writer only), a
 * full collection and a reading of live memory as each chunk of the zip leaves the writer
 * (slower: its time and peaks are not figures).
 */
async function child(kind: Kind, dir: string, count: number, retained: boolean): Promise<void> {
  const tree = path.join(dir, "tree");
  const paths = (await readFile(path.join(dir, "manifest.txt"), "utf8")).split("\n").slice(0, count);
  const out = path.join(dir, `${kind}-${count}.zip`);
  // The in-memory variant measures the service path (contents already rendered); it holds its
  // input, so its memory is not a figure.
  const contents = kind === "ours-memory" ? await Promise.all(paths.map((p) => readFile(path.join(tree, p), "utf8"))) : [];
  // "ours" reads each file with a blocking read as `zip` does; "ours-async" with
  // fs.promises.readFile, started `readAhead` entries early, as a server would.
  const load = (p: string) => (kind === "ours" ? () => readFileSync(path.join(tree, p)) : () => readFile(path.join(tree, p)));
  const startLive = retained ? liveAfterGc() : 0;
  let peakLive = startLive;
  const sampleLive = () => (peakLive = Math.max(peakLive, liveAfterGc()));
  globalThis.gc?.();
  const startRss = mb(process.memoryUsage().rss);
  let peakHeap = 0;
  const sample = () => (peakHeap = Math.max(peakHeap, mb(process.memoryUsage().heapUsed)));
  const sampler = setInterval(sample, 5);
  const started = performance.now();
  if (kind === "yazl") {
    const zip = new yazl.ZipFile();
    const done = pipeline(zip.outputStream, createWriteStream(out));
    for (const p of paths) zip.addFile(path.join(tree, p), p);
    zip.end();
    await done;
  } else {
    const entries = function* (): Generator<ZipEntryInput> {
      for (let i = 0; i < paths.length; i++) {
        const p = paths[i]!;
        yield { path: p, content: kind === "ours-memory" ? contents[i]! : load(p) };
      }
    };
    const zip = createZipStream(entries());
    if (retained) {
      const sampled = async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          sampleLive();
          yield chunk;
        }
        sampleLive();
      };
      await pipeline(zip, sampled, createWriteStream(out));
    } else {
      await pipeline(zip, createWriteStream(out));
    }
  }
  const ms = performance.now() - started;
  clearInterval(sampler);
  sample();
  const run: Run = { ms, peakRss: process.resourceUsage().maxRSS / 1000, startRss, peakHeap, archiveBytes: (await stat(out)).size };
  if (retained) run.retained = mb(peakLive - startLive);
  process.stdout.write(`${JSON.stringify(run)}\n`);
}

/** Runs `--child=kind` in a fresh process. */
function runChild(kind: Kind, dir: string, count: number, extra: string[] = []): Run {
  const self = fileURLToPath(import.meta.url);
  const res = spawnSync(process.execPath, ["--expose-gc", ...profileFlags(), self, `--child=${kind}`, `--dir=${dir}`, `--files=${count}`, ...extra], { encoding: "utf8" });
  if (res.status !== 0) throw new Error(`${kind} child failed: ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split("\n").pop()!) as Run;
}

/** The fastest of several runs, with the worst memory figures seen in any of them. */
function best(runs: Run[]): Run {
  const fastest = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
  return { ...fastest, peakRss: Math.max(...runs.map((r) => r.peakRss)), peakHeap: Math.max(...runs.map((r) => r.peakHeap)) };
}

/** Times `zip -q -r` over the tree; peak RSS through /usr/bin/time when it is there. */
function zipOnce(dir: string, count: number): Run {
  const out = path.join(dir, `zip-${count}.zip`);
  rmSync(out, { force: true });
  const time = existsSync("/usr/bin/time");
  const args = ["-q", "-r", out, "src"];
  const started = performance.now();
  const res = time
    ? spawnSync("/usr/bin/time", ["-f", "%M", "zip", ...args], { cwd: path.join(dir, "tree"), encoding: "utf8" })
    : spawnSync("zip", args, { cwd: path.join(dir, "tree"), encoding: "utf8" });
  const ms = performance.now() - started;
  if (res.status !== 0) throw new Error(`zip failed: ${res.stderr}`);
  const peakKb = time ? Number(res.stderr.trim().split("\n").pop()) : NaN;
  return { ms, peakRss: peakKb / 1000, startRss: 0, peakHeap: 0, archiveBytes: statSync(out).size };
}

async function main(): Promise<void> {
  if (spawnSync("zip", ["-v"]).status !== 0) {
    // A notice, not a figure: stderr, so that `--json` output stays one JSON line per figure.
    process.stderr.write("archive bench skipped: the system `zip` command is not on PATH\n");
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), "archive-bench-"));
  try {
    const paths: string[] = [];
    let bytes = 0;
    let smallBytes = 0;
    for (const file of sourceFiles(fileCount)) {
      const target = path.join(dir, "tree", file.path);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, file.content);
      paths.push(file.path);
      bytes += Buffer.byteLength(file.content);
      if (paths.length === smallCount) smallBytes = bytes;
    }
    await writeFile(path.join(dir, "manifest.txt"), paths.join("\n"));

    // Take turns so that a burst of load elsewhere hits every contender alike.
    const runs = { zip: [] as Run[], ours: [] as Run[], async: [] as Run[], memory: [] as Run[], yazl: [] as Run[], ours2k: [] as Run[], yazl2k: [] as Run[] };
    for (let round = 0; round < 3; round++) {
      runs.zip.push(zipOnce(dir, fileCount));
      runs.ours.push(runChild("ours", dir, fileCount));
      runs.async.push(runChild("ours-async", dir, fileCount));
      runs.memory.push(runChild("ours-memory", dir, fileCount));
      runs.ours2k.push(runChild("ours", dir, smallCount));
      if (round < 2) runs.yazl.push(runChild("yazl", dir, fileCount)); // ~4 s a run
      if (round < 1) runs.yazl2k.push(runChild("yazl", dir, smallCount));
    }
    const retained = { large: runChild("ours", dir, fileCount, ["--retained"]).retained!, small: runChild("ours", dir, smallCount, ["--retained"]).retained! };
    const [zip, ours, async, memory, yz, oursSmall, yzSmall] = [runs.zip, runs.ours, runs.async, runs.memory, runs.yazl, runs.ours2k, runs.yazl2k].map(best) as [Run, Run, Run, Run, Run, Run, Run];

    const rate = (r: Run) => mb(bytes) / (r.ms / 1000);
    const size = (r: Run) => `${mb(r.archiveBytes).toFixed(2)} MB`;
    const own = (r: Run) => r.peakRss - r.startRss;
    const peakGrowth = own(ours) - own(oursSmall);
    const figures: Figure[] = [
      ratioFigure("archive.throughput_vs_zip", rate(ours), rate(zip), "MB/s", 1, `files read from disk as archived (blocking reads, like zip); archive ${size(ours)}, zip's ${size(zip)}`),
      ratioFigure("archive.throughput_async_fs_vs_zip", rate(async), rate(zip), "MB/s", 0.5, "files read with fs.promises.readFile, 8 entries ahead"),
      ratioFigure("archive.throughput_in_memory_vs_zip", rate(memory), rate(zip), "MB/s", 0.5, "contents already in memory (rendered output)"),
      ratioFigure("archive.throughput_vs_yazl", rate(ours), rate(yz), "MB/s", 1, `yazl addFile, archive ${size(yz)}`),
      limitFigure("archive.memory_10k", own(ours), "MB", 64, own(yz), `peak RSS above the idle process (${ours.startRss.toFixed(0)} MB idle, ${ours.peakRss.toFixed(0)} MB peak); baseline yazl; zip's whole process ${zip.peakRss.toFixed(1)} MB`),
      limitFigure("archive.memory_2k", own(oursSmall), "MB", 64, own(yzSmall), `${smallCount} files (${mb(smallBytes).toFixed(1)} MB); baseline yazl`),
      limitFigure(
        "archive.memory_growth_2k_to_10k",
        Math.max(0, retained.large - retained.small),
        "MB",
        8,
        null,
        `5x the files and input: memory live after a full collection as each zip chunk leaves the writer, most above before archiving (10,000 files ${retained.large.toFixed(1)} MB, 2,000 ${retained.small.toFixed(1)} MB); peak RSS grew ${peakGrowth.toFixed(1)} MB, yazl's ${(own(yz) - own(yzSmall)).toFixed(1)} MB`,
      ),
      limitFigure("archive.peak_heap_10k", ours.peakHeap, "MB", 64, yz.peakHeap, "V8 heap in use, sampled every 5 ms; baseline yazl"),
    ];
    report(`Archive: zip of ${fileCount.toLocaleString("en")} generated files (${mb(bytes).toFixed(1)} MB)`, figures);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
