/**
 * How deep a template may nest: blocks and includes together at most 100 levels, an
 * expression at most 100 operators. Past that an error names the place, where thousands of
 * levels used to overflow the stack and fail outside the template's errors.
 */
import type { Case } from "./case.ts";

const ifs = (n: number, inner = "x") => `${"{:if a:}".repeat(n)}${inner}${"{:endif:}".repeat(n)}`;
const s = { a: true, items: [1] };

export const nestingCases: Case[] = [
  { name: "blocks nest 100 deep", content: ifs(100), scope: s, output: "x" },
  { name: "the 101st nested block is an error at its tag", content: ifs(101), scope: s, error: { line: 1, column: 801, message: /Blocks nest more than 100 deep here/ } },
  {
    name: "thousands of nested loops: an error, not a stack overflow",
    content: `${"{:for items:}".repeat(5000)}x${"{:endfor:}".repeat(5000)}`,
    scope: s,
    error: { line: 1, column: 1301, message: /more than 100 deep/ },
  },
  {
    name: "an include counts its file's nesting at the include site",
    content: ifs(50, "{:include: a.txt:}"),
    files: [{ file_name: "a.txt", content: ifs(49) }],
    scope: s,
    output: "x",
    out: { "a.txt": "x" },
  },
  {
    name: "an include that would nest past 100 is an error at the include",
    content: ifs(50, "{:include: a.txt:}"),
    files: [{ file_name: "a.txt", content: ifs(50) }],
    scope: s,
    error: { line: 1, column: 401, message: /Include `a\.txt`: blocks and includes would nest 101 deep here, more than 100/ },
  },
  {
    name: "a chain of includes counts each file",
    content: "{:include: f0.txt:}",
    files: Array.from({ length: 120 }, (_, i) => ({ file_name: `_f${i}.txt`, content: i < 119 ? `{:include: _f${i + 1}.txt:}` : "end" })).map((f, i) =>
      i === 0 ? { ...f, file_name: "f0.txt", content: "{:include: _f1.txt:}" } : f,
    ),
    scope: s,
    // _f18 includes _f19 … _f119: 101 levels from there.
    error: { file: "_f18.txt", line: 1, column: 1, message: /Include `_f19\.txt`: blocks and includes would nest 101 deep here, more than 100/ },
  },
  { name: "an expression of 100 operators", content: `{:if ${"not not ".repeat(50)}a:}x{:endif:}`, scope: s, output: "x" },
  { name: "the 101st operator is an error at it", content: `{:if ${"not ".repeat(101)}a:}x{:endif:}`, scope: s, error: { line: 1, column: 406, message: /more than 100 operators/ } },
  { name: "a long and-chain counts", content: `{:if a${" and a".repeat(5000)}:}x{:endif:}`, scope: s, error: { line: 1, column: 608, message: /more than 100 operators/ } },
  { name: "filters count", content: `{:a${"|upper".repeat(101)}:}`, scope: { a: "x" }, error: { line: 1, column: 604, message: /more than 100 operators/ } },
  { name: "parentheses count", content: `{:if ${"(".repeat(101)}a${")".repeat(101)}:}x{:endif:}`, scope: s, error: { line: 1, column: 106, message: /more than 100 operators/ } },
];
