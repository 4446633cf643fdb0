/**
 * Template rendering benchmark (BENCHMARKS.md, "Template rendering"): one model file per table
 * over a generated 300-table schema (loops over fields, conditionals, filters), rendered by our
 * engine (`renderTemplate`, through its public API: cache lookup, repeat, path checks), by Eta
 * (compiled once) and Handlebars (precompiled), and by a hand-written function as the limit.
 * All four must produce the same files, which is asserted before timing. Contenders take turns
 * for many short rounds and each keeps its best round, because the machine is shared.
 *
 * A second figure prices the code-block sandbox: the same render with one code block per
 * file, against the render without it.
 */
import { Eta } from "eta";
import Handlebars from "handlebars";
import { filters, renderTemplate, sandboxHost } from "../../shared/template/index.ts";
import { crudSchema, etaTemplate, handlebarsTemplate, handWritten, pathOf, ultimateFile } from "../shared/template/fixtures/crud.ts";
import { limitFigure, ratioFigure, report } from "./report.ts";

const schema = crudSchema(300);
type Files = Record<string, string>;

const eta = new Eta({ autoEscape: false, autoTrim: false, useWith: false });
const etaFn = eta.compile(etaTemplate);

const hb = Handlebars.create();
for (const [name, fn] of Object.entries(filters)) hb.registerHelper(name, (v: unknown) => fn(v));
hb.registerHelper("eq", (a: unknown, b: unknown) => a === b);
hb.registerHelper("or", (...args: unknown[]) => args.slice(0, -1).some(Boolean));
// Precompiled: `precompile` returns the template spec as JavaScript source (its typings say
// otherwise), which is built once here as a bundler would build it.
type TemplateSpecification = Parameters<typeof hb.template>[0];
const specSource = hb.precompile(handlebarsTemplate, { noEscape: true }) as unknown as string;
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const spec = new Function(`return ${specSource}`)() as TemplateSpecification;
const hbFn = hb.template(spec);

const contenders: Record<string, () => Promise<Files>> = {
  ours: async () => (await renderTemplate({ content: "", files: [ultimateFile], scope: { schema } })).files,
  eta: async () => {
    const files: Files = {};
    for (const t of schema.tables) files[pathOf(t)] = etaFn.call(eta, { t, f: filters });
    return files;
  },
  handlebars: async () => {
    const files: Files = {};
    for (const t of schema.tables) files[pathOf(t)] = hbFn({ t });
    return files;
  },
  hand: async () => {
    const files: Files = {};
    for (const t of schema.tables) files[pathOf(t)] = handWritten(t);
    return files;
  },
};

const bytesOf = (files: Files) => Object.values(files).reduce((n, s) => n + Buffer.byteLength(s), 0);

/** Checks that every contender writes exactly the same files. */
async function assertSameOutput(): Promise<number> {
  const expected = await contenders.hand!();
  for (const [name, run] of Object.entries(contenders)) {
    const files = await run();
    const paths = Object.keys(expected);
    if (Object.keys(files).length !== paths.length) throw new Error(`${name}: ${Object.keys(files).length} files, expected ${paths.length}`);
    for (const p of paths) {
      if (files[p] !== expected[p]) throw new Error(`${name}: ${p} differs:\n${files[p]}\n--- expected ---\n${expected[p]}`);
    }
  }
  return bytesOf(expected);
}

/** MB/s of `reps` renders in a row. */
async function throughput(run: () => Promise<Files>, bytes: number, reps: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < reps; i++) await run();
  return (bytes * reps) / 1e6 / ((performance.now() - started) / 1000);
}

const bytes = await assertSameOutput();
const best: Record<string, number> = {};
const names = Object.keys(contenders);
// Many short rounds, taking turns in a rotating order, each contender keeping its best: on a
// shared machine the best round is the one least disturbed by other work.
for (let round = 0; round < 60; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length]!;
    const mbs = await throughput(contenders[name]!, bytes, 5);
    if (round >= 5) best[name] = Math.max(best[name] ?? 0, mbs);
  }
}

// The sandbox's price: one code block per file, against the same render without it.
const withCode = { ...ultimateFile, content: `${ultimateFile.content}{:code:}\`// ${"${"}table.fields.length} fields\`{:codeend:}\n` };
await sandboxHost.warm();
const timeRender = async (file: { file_name: string; content: string; repeat: string | null }) => {
  let ms = Infinity;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await renderTemplate({ content: "", files: [file], scope: { schema } });
    ms = Math.min(ms, performance.now() - started);
  }
  return ms;
};
const oneBlock = { ...ultimateFile, repeat: null, file_name: "one.ts", content: "{:code:}schema.tables.length{:codeend:}" };
const plainMs = await timeRender(ultimateFile);
const codeMs = await timeRender(withCode);
const openMs = await timeRender(oneBlock);
const perBlock = (codeMs - plainMs) / schema.tables.length;

const note = `${schema.tables.length} files, ${(bytes / 1e6).toFixed(2)} MB per render`;
report("Template rendering (CRUD model per table, 300 tables)", [
  ratioFigure("template.render.vs_eta", best.ours!, best.eta!, "MB/s", 1.5, note),
  ratioFigure("template.render.vs_handlebars", best.ours!, best.handlebars!, "MB/s", 1.0),
  ratioFigure("template.render.vs_handwritten", best.ours!, best.hand!, "MB/s", 0.5, "the hand-written function is the limit"),
  limitFigure(
    "template.code_block.cost",
    perBlock,
    "ms",
    1,
    null,
    `per block, 300 in one render (${plainMs.toFixed(1)} ms without, ${codeMs.toFixed(1)} ms with); one block reading the schema: ${openMs.toFixed(1)} ms`,
  ),
]);
