/**
 * The template language, table-driven: every construct, nesting, whitespace, filters, errors
 * with positions, includes and their cycles, file names and repeats, code blocks, nesting limits.
 */
import t from "tap";
import { runCases } from "./cases/case.ts";
import { codeCases } from "./cases/code.ts";
import { conditionCases } from "./cases/conditions.ts";
import { fileCases } from "./cases/files.ts";
import { loopCases } from "./cases/loops.ts";
import { nestingCases } from "./cases/nesting.ts";
import { placeholderCases } from "./cases/placeholders.ts";
import { whitespaceCases } from "./cases/whitespace.ts";

const tables = { placeholderCases, loopCases, conditionCases, whitespaceCases, fileCases, codeCases, nestingCases };
const all = Object.values(tables).flat();

t.test("the suite is as large as promised", async (t) => {
  t.ok(all.length >= 150, `${all.length} cases`);
  t.equal(new Set(all.map((c) => c.name)).size, all.length, "case names are unique");
});

for (const [name, cases] of Object.entries(tables)) t.test(name, async (t) => runCases(t, cases));
