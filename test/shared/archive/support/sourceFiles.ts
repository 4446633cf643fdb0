/**
 * Deterministic generator of source-like files for the archive tests and benchmark: model,
 * controller, migration and test files of a made-up schema, with sizes spread from a few
 * hundred bytes to tens of kilobytes as real generated code is. Text, not random bytes, so
 * deflate sees what it would see in production.
 */

/** One generated file. */
export interface SourceFile {
  /** Relative path, e.g. `app/models/customer_order_12.ts`. */
  path: string;
  content: string;
}

const words = [
  "customer", "order", "invoice", "product", "payment", "shipment", "address", "account", "session", "audit",
  "warehouse", "supplier", "category", "review", "coupon", "refund", "ledger", "tenant", "profile", "message",
];
const types = ["string", "number", "boolean", "Date", "bigint", "string | null", "number | null"];
const kinds = ["models", "controllers", "migrations", "tests"] as const;

/** mulberry32: a small seeded PRNG so every run produces the same bytes. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pascal = (s: string) => s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

function fields(rnd: () => number, count: number): { name: string; type: string }[] {
  const out: { name: string; type: string }[] = [];
  for (let i = 0; i < count; i++) {
    const w = words[Math.floor(rnd() * words.length)]!;
    out.push({ name: `${w}_${["id", "name", "total", "code", "status", "note"][i % 6]}_${i}`, type: types[Math.floor(rnd() * types.length)]! });
  }
  return out;
}

function render(kind: (typeof kinds)[number], table: string, cols: { name: string; type: string }[]): string {
  const cls = pascal(table);
  if (kind === "models") {
    return `/** ${cls}: generated model for table ${table}. */\nexport interface ${cls} {\n${cols.map((c) => `  /** Column ${c.name}. */\n  ${c.name}: ${c.type};\n`).join("")}}\n\nexport function parse${cls}(row: Record<string, unknown>): ${cls} {\n  return {\n${cols.map((c) => `    ${c.name}: row["${c.name}"] as ${c.type},\n`).join("")}  };\n}\n`;
  }
  if (kind === "controllers") {
    return `import { ${cls}, parse${cls} } from "../models/${table}.ts";\n\nexport class ${cls}Controller {\n  async index(query: { page: number }): Promise<${cls}[]> {\n    const rows = await this.db.many(\`select * from ${table} order by id limit 15 offset \${(query.page - 1) * 15}\`);\n    return rows.map(parse${cls});\n  }\n\n${cols.map((c) => `  async findBy${pascal(c.name)}(value: ${c.type}): Promise<${cls} | null> {\n    if (value === undefined) throw new Error("${c.name} is required");\n    const row = await this.db.maybeOne(\`select * from ${table} where ${c.name} = $1\`, [value]);\n    return row ? parse${cls}(row) : null;\n  }\n\n`).join("")}}\n`;
  }
  if (kind === "migrations") {
    return `-- ${table}\ncreate table ${table} (\n  id bigint generated always as identity primary key,\n${cols.map((c) => `  ${c.name} ${c.type.startsWith("number") ? "numeric(12, 2)" : c.type === "boolean" ? "boolean" : c.type === "Date" ? "timestamptz" : "text"}${c.type.endsWith("null") ? "" : " not null"}`).join(",\n")}\n);\n${cols.filter((_, i) => i % 4 === 0).map((c) => `create index ${table}_${c.name}_idx on ${table} (${c.name});\n`).join("")}`;
  }
  return `import t from "tap";\nimport { ${cls}Controller } from "../controllers/${table}.ts";\n\n${cols.map((c) => `t.test("${cls} finds by ${c.name}", async (t) => {\n  const controller = new ${cls}Controller();\n  const found = await controller.findBy${pascal(c.name)}(fixture.${c.name});\n  t.ok(found, "a ${table} row matches its ${c.name}");\n});\n\n`).join("")}`;
}

/** Yields `count` files deterministically (the same seed gives the same bytes). */
export function* sourceFiles(count: number, seed = 1): Generator<SourceFile> {
  const rnd = random(seed);
  for (let i = 0; i < count; i++) {
    const kind = kinds[i % kinds.length]!;
    const table = `${words[Math.floor(rnd() * words.length)]!}_${words[Math.floor(rnd() * words.length)]!}_${i}`;
    // Skewed sizes: most files are small, a few are large, as in real generated output.
    const r = rnd();
    const count = Math.max(1, Math.round(r * r * r * 36));
    yield { path: `src/${kind}/${table.slice(0, 1)}/${table}.${kind === "migrations" ? "sql" : "ts"}`, content: render(kind, table, fields(rnd, count)) };
  }
}
