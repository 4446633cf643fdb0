/** The standalone-tag whitespace rule, and includes (which share its indentation rule). */
import type { Case } from "./case.ts";

const xs = [1, 2];

export const whitespaceCases: Case[] = [
  { name: "standalone for and endfor leave no blank lines", content: "a\n{:for xs:}\n- {:item:}\n{:endfor:}\nb\n", scope: { xs }, output: "a\n- 1\n- 2\nb\n" },
  { name: "indented standalone tags vanish with their indentation", content: "a\n  {:for xs:}\n  - {:item:}\n  {:endfor:}\nb\n", scope: { xs }, output: "a\n  - 1\n  - 2\nb\n" },
  { name: "standalone if, else, endif", content: "{:if yes:}\nY\n{:else:}\nN\n{:endif:}\nend\n", scope: { yes: true }, output: "Y\nend\n" },
  { name: "standalone elseif", content: "{:if no:}\nA\n{:elseif yes:}\nB\n{:endif:}\n", scope: { yes: true, no: false }, output: "B\n" },
  { name: "inline tags keep surrounding spaces", content: "a {:if yes:}b{:endif:} c\n", scope: { yes: true }, output: "a b c\n" },
  { name: "standalone tag at the very end without newline", content: "{:if yes:}\nx\n{:endif:}", scope: { yes: true }, output: "x\n" },
  { name: "two tags on one line are not standalone", content: "{:if yes:}{:if yes:}\nx\n{:endif:}{:endif:}\n", scope: { yes: true }, output: "\nx\n\n" },
  { name: "a block opened and closed on one line stays inline", content: "x\n{:for xs:}{:endfor:}\ny", scope: { xs }, output: "x\n\ny" },
  { name: "trailing blanks after a standalone tag go too", content: "{:if yes:}   \nx\n{:endif:}\t \n", scope: { yes: true }, output: "x\n" },
  { name: "CRLF line endings", content: "a\r\n{:if yes:}\r\nb\r\n{:endif:}\r\nc\r\n", scope: { yes: true }, output: "a\r\nb\r\nc\r\n" },
  { name: "a placeholder alone on its line keeps the line", content: "a\n{:v:}\nb", scope: { v: "" }, output: "a\n\nb" },
  { name: "text beside a tag keeps the line", content: "x {:if yes:}\ny\n{:endif:} z\n", scope: { yes: true }, output: "x \ny\n z\n" },
  { name: "blank lines inside a body are kept", content: "{:for xs:}\n\n{:item:}\n{:endfor:}\n", scope: { xs: [1] }, output: "\n1\n" },
  { name: "nested standalone tags", content: "{:for xs:}\n  {:if item > 1:}\n  {:item:}\n  {:endif:}\n{:endfor:}\n", scope: { xs: [1, 2, 3] }, output: "  2\n  3\n" },
  { name: "tabs count as blanks", content: "\t{:if yes:}\n\tx\n\t{:endif:}\n", scope: { yes: true }, output: "\tx\n" },
  {
    name: "class body from a field loop",
    content: "class X {\n{:for fields:}\n  {:field_name:}: string;\n{:endfor:}\n}\n",
    scope: { fields: [{ field_name: "id" }, { field_name: "name" }] },
    output: "class X {\n  id: string;\n  name: string;\n}\n",
  },
  { name: "false standalone if leaves nothing", content: "a\n{:if no:}\nhidden\n{:endif:}\nb\n", scope: { no: false }, output: "a\nb\n" },

  // Includes.
  { name: "include renders another file", content: "A{:include: parts/b.txt:}C", files: [{ file_name: "parts/b.txt", content: "B" }], output: "ABC", out: { "parts/b.txt": "B" } },
  { name: "a partial (_name) is included but not written", content: "[{:include: _head.txt:}]", files: [{ file_name: "_head.txt", content: "H" }], output: "[H]", out: {} },
  { name: "a partial in a folder", content: "{:include: parts/_x.ts:}", files: [{ file_name: "parts/_x.ts", content: "X" }], output: "X", out: {} },
  { name: "include inside a loop sees item and loop", content: "{:for xs:}{:include: _row.txt:}{:endfor:}", files: [{ file_name: "_row.txt", content: "{:loop.number:}={:item:};" }], scope: { xs: ["a", "b"] }, output: "1=a;2=b;" },
  { name: "include sees a named loop item", content: "{:for t in ts:}{:include: _t.txt:}{:endfor:}", files: [{ file_name: "_t.txt", content: "<{:t.n|upper:}>" }], scope: { ts: [{ n: "x" }, { n: "y" }] }, output: "<X><Y>" },
  {
    name: "nested includes",
    content: "1{:include: _a:}4",
    files: [
      { file_name: "_a", content: "2{:include: _b:}" },
      { file_name: "_b", content: "3" },
    ],
    output: "1234",
  },
  { name: "a standalone include is indented line by line", content: "class X {\n  {:include: _body.txt:}\n}\n", files: [{ file_name: "_body.txt", content: "a();\nb();\n" }], output: "class X {\n  a();\n  b();\n}\n" },
  { name: "include indentation skips empty lines", content: "{\n    {:include: _b:}\n}", files: [{ file_name: "_b", content: "a\n\nb\n" }], output: "{\n    a\n\n    b\n}" },
  { name: "include path is normalised", content: "{:include: ./parts/./_x.txt:}", files: [{ file_name: "parts/_x.txt", content: "ok" }], output: "ok" },
  { name: "include without the colon", content: "{:include _x.txt:}", files: [{ file_name: "_x.txt", content: "ok" }], output: "ok" },
  { name: "include of an unknown file", content: "x\n  {:include: nope.txt:}", error: { line: 2, column: 3, message: /Include `nope.txt`: no file of this template has that name/ } },
  { name: "include of itself is a cycle", content: "{:include: _a.txt:}", files: [{ file_name: "_a.txt", content: "a{:include: _a.txt:}" }], error: { file: "_a.txt", line: 1, column: 2, message: /Include cycle: _a.txt → _a.txt/ } },
  {
    name: "a cycle of three names every file",
    content: "{:include: _a:}",
    files: [
      { file_name: "_a", content: "{:include: _b:}" },
      { file_name: "_b", content: "{:include: _c:}" },
      { file_name: "_c", content: "\n\n{:include: _a:}" },
    ],
    error: { file: "_c", line: 3, column: 1, message: /Include cycle: _a → _b → _c → _a\./ },
  },
  { name: "include path may not climb out", content: "{:include: ../x:}", error: { line: 1, column: 10, message: /Include path `..\/x`: `..` is not allowed/ } },
  { name: "include needs a path", content: "{:include:}", error: { line: 1, column: 10, message: /needs the path/ } },
  { name: "errors inside an included file name that file", content: "{:include: _x.txt:}", files: [{ file_name: "_x.txt", content: "\n {:nope:}" }], error: { file: "_x.txt", line: 2, column: 2, message: /`nope` is not defined/ } },
];
