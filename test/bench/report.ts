/**
 * Benchmark reporting. Every figure is compared with its baseline measured in the same
 * run (these machines are shared; absolute numbers move 20–30 % between runs), and printed
 * as a table row, or with `--json` as one JSON line:
 * `{"name", "value", "unit", "baseline", "ratio", "target"}`.
 */
export interface Figure {
  /** e.g. "jobs.throughput". */
  name: string;
  value: number;
  unit: string;
  /** The same-run baseline figure (null when the figure has none, e.g. a latency limit). */
  baseline: number | null;
  /** value / baseline, or for lower-is-better figures baseline / value; null without baseline. */
  ratio: number | null;
  /** The target as text, e.g. ">= 0.5x" or "< 10 ms". */
  target: string;
  /** Whether the target is met. */
  met: boolean;
  note?: string;
}

export const json = process.argv.includes("--json");

/** Builds a figure where higher is better, with a ratio target. */
export function ratioFigure(name: string, value: number, baseline: number, unit: string, minRatio: number, note?: string): Figure {
  const ratio = baseline > 0 ? value / baseline : 0;
  return { name, value, unit, baseline, ratio, target: `>= ${minRatio}x`, met: ratio >= minRatio, ...(note ? { note } : {}) };
}

/** Builds a figure where higher is better, with an absolute floor (e.g. ">= 5000 jobs/s"). */
export function floorFigure(name: string, value: number, unit: string, min: number, baseline: number | null = null, note?: string): Figure {
  return {
    name,
    value,
    unit,
    baseline,
    ratio: baseline !== null && baseline > 0 ? value / baseline : null,
    target: `>= ${min} ${unit}`,
    met: value >= min,
    ...(note ? { note } : {}),
  };
}

/** Builds a figure with an absolute upper limit (latency, memory). */
export function limitFigure(name: string, value: number, unit: string, max: number, baseline: number | null = null, note?: string): Figure {
  return {
    name,
    value,
    unit,
    baseline,
    ratio: baseline !== null && value > 0 ? baseline / value : null,
    target: `< ${max} ${unit}`,
    met: value < max,
    ...(note ? { note } : {}),
  };
}

const round = (n: number) => (Math.abs(n) >= 100 ? Math.round(n) : Math.round(n * 100) / 100);

/** Prints figures as a table (or JSON lines with --json). */
export function report(title: string, figures: Figure[]): void {
  if (json) {
    for (const f of figures) {
      process.stdout.write(
        `${JSON.stringify({ name: f.name, value: round(f.value), unit: f.unit, baseline: f.baseline === null ? null : round(f.baseline), ratio: f.ratio === null ? null : round(f.ratio), target: f.target })}\n`,
      );
    }
    return;
  }
  const rows = figures.map((f) => [
    f.name,
    `${round(f.value)} ${f.unit}`,
    f.baseline === null ? "-" : `${round(f.baseline)} ${f.unit}`,
    f.ratio === null ? "-" : `${round(f.ratio)}x`,
    f.target,
    f.met ? "met" : "MISSED",
    f.note ?? "",
  ]);
  const header = ["figure", "value", "baseline", "ratio", "target", "result", "note"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  process.stdout.write(`\n${title}\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${rows.map(line).join("\n")}\n`);
  const missed = figures.filter((f) => !f.met);
  if (missed.length) process.stdout.write(`Target missed: ${missed.map((f) => f.name).join(", ")}\n`);
}
