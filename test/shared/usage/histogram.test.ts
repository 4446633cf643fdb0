/**
 * The percentile arithmetic over daily histograms (shared/usage/histogram.ts) against
 * `percentile_cont` computed over the raw values: exact for evenly spread values, within
 * a bucket's width otherwise.
 */
import fc from "fast-check";
import t from "tap";
import { ALL_DEVICES, bucketOf, CellAccumulator, GAMMA, histogramPercentiles, toHistograms } from "../../../shared/usage/histogram.ts";

/** percentile_cont as PostgreSQL computes it. */
function percentileCont(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const h = p * (sorted.length - 1);
  const lo = Math.floor(h);
  return sorted[lo]! + (h - lo) * (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!);
}

function histogramOf(values: number[], deviceClass = "desktop") {
  const cells = new CellAccumulator();
  for (const value of values) cells.add("2026-01-02", { name: "LCP", value, route: "/a", device_class: deviceClass });
  const histograms = toHistograms(cells.take());
  return histograms.find((h) => h.device_class === deviceClass)!;
}

const ps = [0.5, 0.75, 0.95];

t.test("consecutive whole numbers, repeated values and a single value are exact", async (t) => {
  for (const values of [Array.from({ length: 100 }, (_, i) => i + 1), [5, 5, 5, 7, 7, 1200, 1200, 3000], [0.12], [0, 0, 0.5, 1000]]) {
    const h = histogramOf(values);
    const got = histogramPercentiles(h.counts, h.min_values, h.max_values, ps);
    t.same(got.map((v) => Math.round(v * 1e9) / 1e9), ps.map((p) => Math.round(percentileCont(values, p) * 1e9) / 1e9), JSON.stringify(values.slice(0, 5)));
  }
});

t.test("any values: within the width of a bucket of the exact percentile", async () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 3_600_000, noNaN: true }), { minLength: 1, maxLength: 300 }), (values) => {
      const h = histogramOf(values);
      const got = histogramPercentiles(h.counts, h.min_values, h.max_values, ps);
      return ps.every((p, i) => {
        const exact = percentileCont(values, p);
        return Math.abs(got[i]! - exact) <= Math.max(exact * (GAMMA - 1), 1e-6) + 1e-9;
      });
    }),
  );
});

t.test("cells are kept per device class and once more for all classes, in bucket order", async (t) => {
  const cells = new CellAccumulator();
  for (const [value, device] of [[3000, "mobile"], [10, "desktop"], [3001, "mobile"], [0, "tablet"]] as const) {
    cells.add("2026-01-02", { name: "INP", value, route: "/b", device_class: device });
  }
  const histograms = toHistograms(cells.take());
  t.equal(cells.size, 0, "take empties the accumulator");
  const all = histograms.find((h) => h.device_class === ALL_DEVICES)!;
  t.same(all.counts.reduce((a, b) => a + b, 0), 4);
  t.same(all.buckets, [...all.buckets].sort((a, b) => a - b));
  t.same(all.buckets, [bucketOf(0), bucketOf(10), bucketOf(3000)]);
  const mobile = histograms.find((h) => h.device_class === "mobile")!;
  t.same({ counts: mobile.counts, min: mobile.min_values, max: mobile.max_values }, { counts: [2], min: [3000], max: [3001] });
});
