/**
 * The benchmarks' one profiling switch: `BENCH_CPU_PROF=<folder> npm run bench -- <name>` runs
 * each benchmark's process, and the processes it starts (servers, archive builds), under
 * `node --cpu-prof`, writing one `.cpuprofile` per process into <folder> as it exits. A
 * benchmark may narrow its load while profiling (http.bench.ts loads one route). When the run
 * ends, the profiles name their scripts relative to the repository (`shared/jobs/enqueue.ts`,
 * not the checkout's absolute `file://` address), so they can be committed under docs/perf/.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The folder profiles go to, or null when profiling is off. */
export const profileDir = (): string | null => (process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null);

/** Node flags for a process the benchmarks start: `--cpu-prof` into the folder, or none. */
export function profileFlags(): string[] {
  const dir = profileDir();
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Rewrites the `.cpuprofile` files in `dir` so their script addresses are relative to the repository. */
export async function relativiseProfiles(dir: string): Promise<number> {
  const prefix = `${pathToFileURL(repoRoot).href}/`;
  let count = 0;
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".cpuprofile")) continue;
    const file = path.join(dir, name);
    const text = await readFile(file, "utf8");
    if (text.includes(prefix)) await writeFile(file, text.split(prefix).join(""));
    count += 1;
  }
  return count;
}
