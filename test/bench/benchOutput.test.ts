/**
 * Benchmark output under `--json`: only JSON lines on stdout, whatever happens; notices
 * (such as a skipped benchmark) go to stderr.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";

const bench = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

t.test("archive.bench.ts --json without a zip command prints its notice on stderr and no other stdout line", async (t) => {
  // PATH holds only Node's own folder, so the system `zip` is not found.
  const res = spawnSync(process.execPath, [bench("archive.bench.ts"), "--json"], {
    encoding: "utf8",
    env: { ...process.env, PATH: path.dirname(process.execPath) },
    timeout: 60_000,
  });
  t.equal(res.status, 0, `exits 0 (${res.stderr.trim()})`);
  t.match(res.stderr, /archive bench skipped: the system `zip` command is not on PATH/);
  const lines = res.stdout.split("\n").filter((line) => line.trim() !== "");
  for (const line of lines) t.doesNotThrow(() => JSON.parse(line), `a JSON line: ${line}`);
  t.same(lines, [], "nothing measured, nothing printed");
});
