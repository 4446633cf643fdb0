/** Conditionals: truthiness, operators, precedence, branches. */
import type { Case } from "./case.ts";

const s = { yes: true, no: false, zero: 0, one: 1, two: 2, empty: "", text: "abc", none: null, list: [1], nolist: [], obj: {}, kind: "Varchar" };
const cond = (expr: string) => `{:if ${expr}:}T{:else:}F{:endif:}`;

// Every combination of four flags, for conditionals that follow each other (fuse.ts copies them into each other's branches).
const flags = Array.from({ length: 16 }, (_, i) => ({ a: (i & 1) > 0, b: (i & 2) > 0, c: (i & 4) > 0, d: (i & 8) > 0, n: i }));
const chained = flags.map((f) => `<${f.a ? "A" : f.b ? "B" : ""}-${f.c ? `C${f.n}` : "c"}${f.d ? "D" : ""}>`).join("");

/** An `if` of `n` branches testing `v == 0` … `v == n - 1` (each printing its number), then an else printing `E`. */
const chain = (n: number) => `{:if v == 0:}0${Array.from({ length: n - 1 }, (_, i) => `{:elseif v == ${i + 1}:}${i + 1}`).join("")}{:else:}E{:endif:}`;

export const conditionCases: Case[] = [
  // Past 64 branches the chain is generated flat (codegen's maxElseIfs).
  { name: "a long elseif chain takes the first branch that holds", content: `${chain(70)}|${chain(70)}`, scope: { v: 69 }, output: "69|69" },
  { name: "a long elseif chain falls to its else", content: chain(70), scope: { v: 70 }, output: "E" },
  { name: "a long elseif chain closing a loop body", content: `{:for xs:}<{:for ys:}-${chain(70).replaceAll("v ==", "item ==")}{:endfor:}>{:endfor:}`, scope: { xs: [1, 2], ys: [0, 69, 99] }, output: "<-0-69-E><-0-69-E>" },
  { name: "true literal", content: cond("true"), output: "T" },
  { name: "false literal", content: cond("false"), output: "F" },
  { name: "null literal is false", content: cond("null"), output: "F" },
  { name: "true path", content: cond("yes"), scope: s, output: "T" },
  { name: "false path", content: cond("no"), scope: s, output: "F" },
  { name: "zero is false", content: cond("zero"), scope: s, output: "F" },
  { name: "empty string is false", content: cond("empty"), scope: s, output: "F" },
  { name: "non-empty string is true", content: cond("text"), scope: s, output: "T" },
  { name: "null is false", content: cond("none"), scope: s, output: "F" },
  { name: "empty list is false", content: cond("nolist"), scope: s, output: "F" },
  { name: "non-empty list is true", content: cond("list"), scope: s, output: "T" },
  { name: "empty object is true", content: cond("obj"), scope: s, output: "T" },
  { name: "missing value is false, not an error", content: cond("missing.deep"), scope: s, output: "F" },
  { name: "if without else", content: "[{:if yes:}in{:endif:}][{:if no:}in{:endif:}]", scope: s, output: "[in][]" },
  { name: "not", content: cond("not no"), scope: s, output: "T" },
  { name: "double not", content: cond("not not yes"), scope: s, output: "T" },
  { name: "== on strings", content: cond('text == "abc"'), scope: s, output: "T" },
  { name: "!= on strings", content: cond("text != 'abc'"), scope: s, output: "F" },
  { name: "== is strict", content: cond('one == "1"'), scope: s, output: "F" },
  { name: "== null", content: cond("none == null"), scope: s, output: "T" },
  { name: "missing is not == null (strict)", content: cond("missing == null"), scope: s, output: "F" },
  { name: "< and >", content: `${cond("one < two")}${cond("one > two")}`, scope: s, output: "TF" },
  { name: "<= and >=", content: `${cond("two <= 2")}${cond("one >= 2")}`, scope: s, output: "TF" },
  { name: "negative and decimal numbers", content: `${cond("-1 < zero")}${cond("1.5 > one")}`, scope: s, output: "TT" },
  { name: "and", content: `${cond("yes and one")}${cond("yes and no")}`, scope: s, output: "TF" },
  { name: "or", content: `${cond("no or one")}${cond("no or zero")}`, scope: s, output: "TF" },
  { name: "and binds tighter than or", content: cond("yes or no and no"), scope: s, output: "T" },
  { name: "parentheses override precedence", content: cond("(yes or no) and no"), scope: s, output: "F" },
  { name: "not binds looser than ==", content: cond("not one == 2"), scope: s, output: "T" },
  { name: "not binds tighter than and", content: cond("not no and yes"), scope: s, output: "T" },
  { name: "nested parentheses", content: cond("((one == 1) and (not (two < 1)))"), scope: s, output: "T" },
  { name: "filter in a condition", content: cond('kind|lower == "varchar"'), scope: s, output: "T" },
  { name: "comparison of two paths", content: cond("one < two and two > one"), scope: s, output: "T" },
  { name: "elseif chain picks the first true branch", content: "{:for n in ns:}{:if n == 1:}one{:elseif n == 2:}two{:elseif n > 2:}many{:else:}none{:endif:} {:endfor:}", scope: { ns: [0, 1, 2, 5] }, output: "none one two many " },
  { name: "elseif without else", content: "{:if no:}a{:elseif yes:}b{:endif:}", scope: s, output: "b" },
  { name: "nested ifs", content: "{:if yes:}{:if no:}x{:else:}y{:endif:}{:else:}z{:endif:}", scope: s, output: "y" },
  { name: "if inside a loop using loop metadata", content: "{:for xs:}{:if loop.first:}[{:endif:}{:item:}{:if loop.last:}]{:endif:}{:endfor:}", scope: { xs: [1, 2, 3] }, output: "[123]" },
  { name: "condition on a field", content: "{:for fields:}{:if is_nullable:}?{:else:}!{:endif:}{:endfor:}", scope: { fields: [{ is_nullable: true }, { is_nullable: false }] }, output: "?!" },
  { name: "string escapes in a literal", content: cond('q == "a\\"b"'), scope: { q: 'a"b' }, output: "T" },
  // Text next to conditionals is moved into their branches when compiled (fuse.ts): same output.
  { name: "text around a conditional in a loop", content: "{:for xs:}[{:if item > 1:}big{:elseif item == 1:}one{:endif:}]{:endfor:}", scope: { xs: [0, 1, 2] }, output: "[][one][big]" },
  { name: "text between two conditionals", content: "a{:if yes:}1{:endif:}-{:if no:}2{:endif:}b", scope: s, output: "a1-b" },
  { name: "long text before a conditional keeps its order", content: `${"x".repeat(100)}\nab{:if yes:}c{:endif:}d`, scope: s, output: `${"x".repeat(100)}\nabcd` },
  { name: "long text without a newline stays put", content: `${"y".repeat(100)}{:if no:}c{:else:}e{:endif:}${"z".repeat(100)}`, scope: s, output: `${"y".repeat(100)}e${"z".repeat(100)}` },
  { name: "an included conditional at two sites", content: "<{:include: _c:}>[{:include: _c:}]", files: [{ file_name: "_c", content: "{:if yes:}y{:else:}n{:endif:}" }], scope: s, output: "<y>[y]" },
  { name: "nested conditionals with text on every side", content: "({:if yes:}<{:if no:}a{:else:}b{:endif:}>{:endif:})", scope: s, output: "(<b>)" },
  {
    name: "conditionals in a row, over every combination",
    content: "{:for xs:}<{:if a:}A{:elseif b:}B{:endif:}-{:if c:}C{:n:}{:else:}c{:endif:}{:if d:}D{:endif:}>{:endfor:}",
    scope: { xs: flags },
    output: chained,
  },
  { name: "a run of conditionals longer than is copied", content: "{:for xs:}{:if a:}1{:endif:}{:if b:}2{:endif:}{:if c:}3{:endif:}{:if d:}4{:endif:}{:if a:}5{:endif:}{:if b:}6{:endif:}.{:endfor:}", scope: { xs: flags.slice(9, 12) }, output: "145.246.12456." },
  { name: "a missing value in a conditional after another", content: "{:if yes:}a{:endif:}\n  {:if yes:}{:nope:}{:endif:}", scope: s, error: { line: 2, column: 13, message: /`nope` is not defined/ } },
  { name: "a missing value in a conditional after another warns once", content: "{:if no:}a{:endif:}{:if yes:}{:nope:}{:endif:}!", scope: s, mode: "preview", output: "!", warnings: [[1, 30, /`nope` is not defined/]] },
  {
    name: "a conditional with many branches",
    content: "{:for ns:}{:if item == 1:}a{:elseif item == 2:}b{:elseif item == 3:}c{:elseif item == 4:}d{:elseif item == 5:}e{:elseif item == 6:}f{:else:}z{:endif:}.{:endfor:}",
    scope: { ns: [1, 3, 6, 9] },
    output: "a.c.f.z.",
  },
  { name: "keywords are not paths", content: cond("yes and"), scope: s, error: { line: 1, column: 13, message: /Expected a value/ } },
  { name: "dangling ==", content: "\n{:if a ==:}x{:endif:}", error: { line: 2, column: 10, message: /Expected a value/ } },
  { name: "single = suggests ==", content: "{:if a = b:}x{:endif:}", error: { line: 1, column: 8, message: /Unexpected `=` \(use `not`, `and`, `or`, `==`\)/ } },
  { name: "&& is not an operator", content: "{:if a && b:}x{:endif:}", error: { line: 1, column: 8, message: /Unexpected `&`/ } },
  { name: "! is not an operator", content: "{:if !a:}x{:endif:}", error: { line: 1, column: 6, message: /Unexpected `!`/ } },
  { name: "chained comparisons are refused", content: "{:if 1 < a < 3:}x{:endif:}", error: { line: 1, column: 12, message: /cannot be chained/ } },
  { name: "unbalanced parenthesis", content: "{:if (a and b:}x{:endif:}", error: { line: 1, column: 14, message: /Expected `\)`/ } },
  { name: "if without a condition", content: "{:if:}x{:endif:}", error: { line: 1, column: 5, message: /Expected a value/ } },
  { name: "unterminated string in a condition", content: '{:if a == "x:}y{:endif:}', error: { line: 1, column: 1, message: /never closed/ } },
  { name: "else outside if", content: "a {:else:} b", error: { line: 1, column: 3, message: /outside of `\{:if:\}`/ } },
  { name: "else inside a loop but outside if", content: "{:for xs:}{:else:}{:endfor:}", error: { line: 1, column: 11, message: /outside of `\{:if:\}`.*innermost open block is `\{:for …:\}`/ } },
  { name: "else after else", content: "{:if a:}1{:else:}2{:else:}3{:endif:}", error: { line: 1, column: 19, message: /after `\{:else:\}`/ } },
  { name: "elseif after else", content: "{:if a:}1{:else:}2{:elseif b:}3{:endif:}", error: { line: 1, column: 19, message: /after `\{:else:\}`/ } },
  { name: "else with a condition", content: "{:if a:}1{:else b:}2{:endif:}", error: { line: 1, column: 16, message: /takes no condition/ } },
  { name: "endif closing a for", content: "{:for xs:}\n  {:if a:}\n{:endfor:}", error: { line: 3, column: 1, message: /closes `\{:if …:\}` opened at line 2, column 3/ } },
  { name: "unclosed if", content: "{:if a:}x", error: { line: 1, column: 1, message: /never closed with `\{:endif:\}`/ } },
];
