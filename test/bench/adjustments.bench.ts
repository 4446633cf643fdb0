/**
 * Code adjustments benchmark (issue "Code flow"): 100 adjustments applied to a 1,000-file
 * generation, against applying the same patches with jsdiff's plain `applyPatch` in a loop,
 * measured in the same run. Target: the three-way merge takes at most 2× the time of the
 * plain patches (a ratio ≥ 0.5x in adjustments per second).
 *
 * The generation is realistic for the case adjustments exist for: the template changed
 * since the edits were made, so each of the 100 files differs from the edit's base (a line
 * changed and one added near the end) and no merge takes a shortcut; each edit changes two
 * lines near the start, so both strategies succeed on every file.
 *
 * Two figures, each as a ratio of medians over alternating rounds:
 * - the merge itself (`mergeAll`, what the job runs on the files it read) against
 *   `applyPatch` of the stored diffs over the same 100 texts;
 * - the whole apply as the `adjustments__apply` job runs it (read the 100 files from
 *   PostgreSQL, merge, write a new generation with the 900 others copied in SQL) against the
 *   same pipeline with `applyPatch` in place of the merge, plus the peak RSS of the job path.
 */
import { applyPatch } from "diff";
import { z } from "zod";
import { applyAdjustments, mergeAll } from "../../shared/adjustments/apply.ts";
import { diffOf, diffStats } from "../../shared/adjustments/diffs.ts";
import { insertAdjustment, listAdjustments } from "../../shared/adjustments/store.ts";
import { createPool, ignoredRow, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { recordGeneration } from "../../shared/generations/record.ts";
import { buildProject, buildUser } from "../support/factories.ts";
import { buildTemplate } from "../support/templateFactories.ts";
import { benchDatabase } from "./support/db.ts";
import { limitFigure, ratioFigure, report } from "./report.ts";

const FILES = 1000;
const ADJUSTED = 100;
const ROUNDS = 5;

/** A generated source file of ~120 lines with the repetition real code has (braces, blank lines). */
function sourceFile(n: number, version: number): string {
  const out = [`// Generated model ${n}`, `export class Model${n} {`];
  for (let i = 0; i < 12; i += 1) {
    out.push(`  /** Field ${i} of model ${n}. */`, `  field${i}: string = "";`, "");
    out.push(`  getField${i}(): string {`, `    return this.field${i};`, "  }", "");
  }
  if (version > 1) out.push(`  /** Added by template version ${version}. */`, `  version = ${version};`);
  out.push("}", "");
  return out.join("\n");
}

/** The user's edit: two lines near the start. */
const edit = (text: string, n: number) => text.replace(`  field0: string = "";`, `  field0: string = "edited ${n}";`).replace(`// Generated model ${n}`, `// Generated model ${n}, reviewed`);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function insertGeneration(pool: DatabasePool, projectId: number, templateId: number, version: number): Promise<number> {
  const files: Record<string, string> = {};
  for (let n = 0; n < FILES; n += 1) files[`src/models/Model${n}.ts`] = sourceFile(n, n < ADJUSTED ? version : 1);
  return recordGeneration(pool, { projectId, userId: null, templateId, generatorId: null, schemaId: null, values: {}, files, jobId: null });
}

/** The same pipeline as the job with `applyPatch` in place of the merge. */
async function applyPlain(pool: DatabasePool, generationId: number, projectId: number, templateId: number, key: string): Promise<number> {
  const adjustments = await listAdjustments(pool, projectId, { templateId, generatorId: null }, true);
  const rows = await pool.any(sql.type(z.object({ path: z.string(), content: z.instanceof(Buffer) }))`
    select path, content from code_generation_files where code_generation_id = ${generationId} and path = any(${sql.array(adjustments.map((a) => a.file_path), "text")})`);
  const files = new Map(rows.map((r) => [r.path, r.content.toString("utf8")]));
  const changed: Record<string, string> = {};
  for (const a of adjustments) {
    const patched = applyPatch(files.get(a.file_path)!, a.diff);
    if (patched === false) throw new Error(`applyPatch failed on ${a.file_path}`);
    changed[a.file_path] = patched;
  }
  return recordGeneration(pool, { projectId, userId: null, templateId, generatorId: null, schemaId: null, values: {}, files: changed, jobId: null, copyFrom: generationId, applyKey: key });
}

const db = await benchDatabase();
const pool = await createPool(db.url, { maxPoolSize: 4 });
try {
  const user = await buildUser(pool);
  const project = await buildProject(pool, user.id);
  const template = await buildTemplate(pool, { projectId: project }, user.id, { name: "Models", variables: [], content: "" });
  const base = await insertGeneration(pool, project, template, 1);
  for (let n = 0; n < ADJUSTED; n += 1) {
    const path = `src/models/Model${n}.ts`;
    const baseContent = sourceFile(n, 1);
    const adjusted = edit(baseContent, n);
    const diff = diffOf(path, baseContent, adjusted);
    await insertAdjustment(pool, { projectId: project, source: { templateId: template, generatorId: null }, filePath: path, baseGenerationId: base, baseContent, adjustedContent: adjusted, diff, ...diffStats(diff), userId: user.id });
  }
  const next = await insertGeneration(pool, project, template, 2);
  const adjustments = await listAdjustments(pool, project, { templateId: template, generatorId: null }, true);
  const theirs = new Map(adjustments.map((a, n) => [a.file_path, sourceFile(n, 2)]));

  // The merge alone, and the plain patches over the same texts.
  const mergeMs: number[] = [];
  const patchMs: number[] = [];
  for (let round = 0; round < ROUNDS * 4; round += 1) {
    let started = performance.now();
    const { results } = mergeAll(adjustments, theirs, next);
    mergeMs.push(performance.now() - started);
    if (results.some((r) => r.status !== "applied")) throw new Error("every merge should apply cleanly");
    started = performance.now();
    for (const a of adjustments) if (applyPatch(theirs.get(a.file_path)!, a.diff) === false) throw new Error("applyPatch failed");
    patchMs.push(performance.now() - started);
  }

  // The whole apply through PostgreSQL, alternating with the plain pipeline.
  globalThis.gc?.();
  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 2);
  const jobMs: number[] = [];
  const plainMs: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    let started = performance.now();
    const outcome = await applyAdjustments(pool, { generationId: next, userId: user.id, applyKey: `bench:merge:${round}` });
    jobMs.push(performance.now() - started);
    if (!outcome || outcome.results.length !== ADJUSTED) throw new Error("the apply did not run");
    started = performance.now();
    await applyPlain(pool, next, project, template, `bench:plain:${round}`);
    plainMs.push(performance.now() - started);
  }
  clearInterval(sampler);
  const written = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select file_count as n from code_generations where apply_key = 'bench:merge:0'`);
  if (written !== FILES) throw new Error(`the adjusted generation holds ${written} files`);
  await pool.query(sql.type(ignoredRow)`select 1`);

  const perSecond = (ms: number) => (ADJUSTED * 1000) / ms;
  report("Code adjustments: 100 adjustments on a 1,000-file generation (three-way merge vs jsdiff applyPatch)", [
    ratioFigure("adjustments.merge_vs_applyPatch", perSecond(median(mergeMs)), perSecond(median(patchMs)), "adj/s", 0.5,
      `merge ${median(mergeMs).toFixed(1)} ms, applyPatch ${median(patchMs).toFixed(1)} ms for 100 files of ~120 lines; target: at most 2x the time`),
    ratioFigure("adjustments.apply_job_vs_plain", perSecond(median(jobMs)), perSecond(median(plainMs)), "adj/s", 0.5,
      `whole apply ${(median(jobMs) / 1000).toFixed(2)} s vs ${(median(plainMs) / 1000).toFixed(2)} s with applyPatch; both read and write PostgreSQL (900 files copied in SQL)`),
    limitFigure("adjustments.apply_peak_rss", (peakRss - startRss) / 1e6, "MB", 128, null, "peak RSS above the process before the applies (both pipelines, 10 runs)"),
  ]);
} finally {
  await pool.end();
  await db.drop();
}
