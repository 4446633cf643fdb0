/**
 * The full-run summary: medians and ranges over runs, targets judged from their text, figures
 * missing from a run, npm's banner lines skipped; and the command itself on three files.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { markdown, median, meets, readRun, summarize, type FigureLine } from "./summarize.ts";

const line = (name: string, value: number, baseline: number | null, ratio: number | null, target: string, unit = "ms"): FigureLine => ({ name, value, unit, baseline, ratio, target });

t.test("targets are judged from their text", async (t) => {
  t.ok(meets(line("a", 10, 20, 0.5, ">= 0.5x")));
  t.notOk(meets(line("a", 10, 20, 0.49, ">= 0.5x")));
  t.ok(meets(line("a", 19.9, null, null, "< 20 ms")));
  t.notOk(meets(line("a", 20, null, null, "< 20 ms")));
  t.ok(meets(line("a", 5000, 9000, 0.55, ">= 5000 jobs/s", "jobs/s")), "a floor judges the value, not the ratio");
  t.notOk(meets(line("a", 4999, null, null, ">= 5000 jobs/s", "jobs/s")));
  t.ok(meets(line("a", 83, null, null, "< Infinity moves/s")));
  t.notOk(meets(line("a", 1, 2, null, ">= 1x")), "a ratio target without a ratio is not met");
  t.ok(meets(line("a", 10, null, null, "no baseline")));
});

t.test("median and range over runs; a figure missing from one run says so", async (t) => {
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  const runs = [
    [line("x", 10, 20, 0.5, ">= 0.6x"), line("y", 5, null, null, "< 6 ms")],
    [line("x", 14, 20, 0.7, ">= 0.6x"), line("y", 7, null, null, "< 6 ms")],
    [line("x", 12, 20, 0.6, ">= 0.6x")],
  ];
  const [x, y] = summarize(runs);
  t.match(x, { name: "x", runs: 3, values: [10, 14, 12], met: 2 });
  t.match(y, { name: "y", runs: 2, met: 1 });
  const table = markdown(summarize(runs), 3);
  t.match(table, "| `x` | 12 (10–14) ms | 20 (20–20) ms | 0.6x (0.5–0.7) | >= 0.6x | 2 of 3 |");
  t.match(table, "| `y` | 6 (5–7) ms |  |  | < 6 ms | 1 of 2 (in 2 of 3 runs) |");
});

t.test("the command reads run files, skipping lines that are not JSON", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-summary-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files = [1200, 1000, 1100].map((value, i) => {
    const file = path.join(dir, `run${i}.json`);
    writeFileSync(file, `\n> schemaforge bench\n> node test/bench/run.ts --json\n\n${JSON.stringify(line("http.one_query", value, 2000, value / 2000, ">= 0.85x", "req/s"))}\n`);
    return file;
  });
  t.same(readRun(`> banner\n${JSON.stringify(line("a", 1, null, null, "< 2 ms"))}\n`), [line("a", 1, null, null, "< 2 ms")]);
  const script = fileURLToPath(new URL("./summarize.ts", import.meta.url));
  const res = spawnSync(process.execPath, [script, ...files], { encoding: "utf8" });
  t.equal(res.status, 0, res.stderr);
  t.match(res.stdout, "| `http.one_query` | 1,100 (1,000–1,200) req/s | 2,000 (2,000–2,000) req/s | 0.55x (0.5–0.6) | >= 0.85x | 0 of 3 |");
  const usage = spawnSync(process.execPath, [script], { encoding: "utf8" });
  t.equal(usage.status, 2);
  t.match(usage.stderr, /usage: npm run bench:summary/);
});
