/**
 * `npm run bench:summary -- <run.json> <run.json> <run.json>`: the median and range of every
 * figure over several `npm run bench -- --json` runs, as a Markdown table (the README's
 * full-run table is made this way). Lines that are not JSON (npm's banner) are skipped; a
 * figure missing from some runs is summarised over the runs that have it, and says so.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Figure } from "./report.ts";

/** One JSON line of `npm run bench -- --json`: a figure without its judgement and note. */
export type FigureLine = Omit<Figure, "met" | "note">;

export interface Summary {
  name: string;
  unit: string;
  target: string;
  runs: number;
  values: number[];
  baselines: number[];
  ratios: number[];
  /** In how many of the runs the target was met. */
  met: number;
}

/** Reads the JSON lines of one run's output. */
export function readRun(text: string): FigureLine[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as FigureLine);
}

/**
 * Whether a figure meets its target text: ">= 0.85x" judges the ratio, ">= 5000 jobs/s" and
 * "< 20 ms" the value; a target of another shape ("no baseline") counts as met.
 */
export function meets(figure: FigureLine): boolean {
  const match = /^(>=|<)\s*(-?[\d.]+|Infinity)(x?)/.exec(figure.target);
  if (!match) return true;
  const limit = Number(match[2]);
  const measured = match[3] === "x" ? figure.ratio : figure.value;
  if (measured === null) return false;
  return match[1] === ">=" ? measured >= limit : measured < limit;
}

/** Figures of several runs, in the order they first appear. */
export function summarize(runs: FigureLine[][]): Summary[] {
  const byName = new Map<string, Summary>();
  for (const run of runs) {
    for (const figure of run) {
      let summary = byName.get(figure.name);
      if (!summary) {
        summary = { name: figure.name, unit: figure.unit, target: figure.target, runs: 0, values: [], baselines: [], ratios: [], met: 0 };
        byName.set(figure.name, summary);
      }
      summary.runs += 1;
      summary.values.push(figure.value);
      if (figure.baseline !== null) summary.baselines.push(figure.baseline);
      if (figure.ratio !== null) summary.ratios.push(figure.ratio);
      if (meets(figure)) summary.met += 1;
    }
  }
  return [...byName.values()];
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const number = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : String(Math.round(n * 100) / 100));
const spread = (values: number[], suffix = "") =>
  values.length === 0 ? "" : `${number(median(values))}${suffix} (${number(Math.min(...values))}–${number(Math.max(...values))})`;

/** A Markdown table: median (range) of value, baseline and ratio, the target, and how often it was met. */
export function markdown(summaries: Summary[], runCount: number): string {
  const lines = [
    "| Figure | Value, median (range) | Baseline | Ratio | Target | Met |",
    "|---|---|---|---|---|---|",
  ];
  for (const s of summaries) {
    const met = `${s.met} of ${s.runs}${s.runs < runCount ? ` (in ${s.runs} of ${runCount} runs)` : ""}`;
    lines.push(`| \`${s.name}\` | ${spread(s.values)} ${s.unit} | ${s.baselines.length ? `${spread(s.baselines)} ${s.unit}` : ""} | ${spread(s.ratios, "x")} | ${s.target} | ${met} |`);
  }
  return `${lines.join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write("usage: npm run bench:summary -- <run.json> [<run.json> …] (outputs of `npm run bench -- --json`)\n");
    process.exit(2);
  }
  const runs = files.map((file) => readRun(readFileSync(file, "utf8")));
  process.stdout.write(markdown(summarize(runs), runs.length));
}
