import t from "tap";
import { nulPath } from "../../shared/nulText.ts";

t.test("nulPath names the first string holding a NUL by its dotted path", async (t) => {
  t.equal(nulPath("a\u0000b"), "", "the value itself");
  t.equal(nulPath({ name: "ok", nested: { list: ["fine", { label: "bad\u0000" }] } }), "nested.list.1.label");
  t.equal(nulPath({ elements: [{ a: "x" }, { b: "y\u0000" }], later: "z\u0000" }), "elements.1.b", "the first in order");
  t.equal(nulPath({ name: "ok", list: [1, null, true, "fine"] }), null);
  t.equal(nulPath(Object.create({ inherited: "x\u0000" })), null, "own keys only");
  let deep: unknown = "deep\u0000";
  for (let i = 0; i < 70; i += 1) deep = { d: deep };
  t.equal(nulPath(deep), null, "not below 64 levels (deeper bodies are refused before)");
});
