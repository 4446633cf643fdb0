import t from "tap";
import { jsonTextMayHoldUnstorable, unstorableText } from "../../shared/storableText.ts";

/** The dotted path of the first string PostgreSQL cannot store, or null. */
const nulPath = (value: unknown) => unstorableText(value)?.path ?? null;

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

t.test("jsonTextMayHoldUnstorable: text without the escape parses to no NUL; the escape sends the value to the walk", async (t) => {
  const values: unknown[] = [
    { name: "ok", list: [1, null, true, "fine", { deeper: "still fine" }] },
    { label: "bad\u0000" },
    ["\u0000"],
    { "key\u0000": "only the key" },
    { text: "a literal backslash then u0000: \\u0000" },
    { text: "\u0001\u001f control characters, not NUL" },
  ];
  for (const value of values) {
    const text = JSON.stringify(value);
    if (!jsonTextMayHoldUnstorable(text)) t.equal(nulPath(JSON.parse(text)), null, `${text}: no NUL in the value`);
  }
  t.ok(jsonTextMayHoldUnstorable(JSON.stringify({ label: "bad\u0000" })), "a NUL in a value shows in the text");
  t.ok(jsonTextMayHoldUnstorable('{"label": "bad\\u0000"}'), "as the JSON escape");
  t.notOk(jsonTextMayHoldUnstorable('{"label": "fine", "n": 0}'), "text without it");
  const literal = JSON.stringify({ text: "\\u0000" });
  t.ok(jsonTextMayHoldUnstorable(literal), "an escaped backslash before u0000 also sends the value to the walk");
  t.equal(nulPath(JSON.parse(literal)), null, "which finds no NUL there");
});

t.test("an unpaired surrogate is text PostgreSQL cannot store: named by path, with its own message; pairs pass", async (t) => {
  t.match(unstorableText({ title: "\ud800" }), { path: "title", message: /unpaired UTF-16 surrogate/ });
  const lone = unstorableText({ card: { title: "ok", labels: ["fine", "x\udfff"] } });
  t.equal(lone?.path, "card.labels.1");
  t.match(lone?.message, /unpaired UTF-16 surrogate/);
  t.match(unstorableText({ a: "\u0000" })?.message, /NUL character/, "a NUL keeps its message");
  t.equal(unstorableText({ emoji: "\ud83d\ude00 a pair is one character", reversed: "ok" }), null, "a well-formed pair is stored as it is");
  t.equal(unstorableText({ "\ud800": "in the key" })?.path, "\ud800", "keys are checked too (jsonb keys are text)");
  t.ok(jsonTextMayHoldUnstorable('{"title":"\\ud800"}'), "the escape of a lone surrogate sends the value to the walk");
  t.ok(jsonTextMayHoldUnstorable('{"title":"\\uD83D\\uDE00"}'), "so does a pair's (which the walk then passes)");
  t.notOk(jsonTextMayHoldUnstorable(JSON.stringify({ title: "😀 as UTF-8" })), "a pair sent as UTF-8 has no escape to look at");
});
