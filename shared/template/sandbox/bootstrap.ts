/**
 * JavaScript that runs inside QuickJS: the session bootstrap (frozen scope, `print`, `echo`)
 * and the wrapper each code block runs in.
 *
 * A block is a strict-mode script whose body sits in its own block statement, so its
 * `let`/`const`/function declarations stay local to the block, while its completion value
 * (the value of its last expression statement) is still the script's result.
 */

/**
 * Evaluated once per session with the scope JSON in global `__scopeJson`; returns
 * `{ take, bind }`, which the host keeps and which are never reachable from user code.
 */
export const bootstrapSource = (maxOutputChars: number) => `(function () {
  "use strict";
  const g = globalThis, parse = JSON.parse, stringify = JSON.stringify, keys = Object.keys;
  const defineProperty = Object.defineProperty, freezeOne = Object.freeze;
  // Freezing in JSON.parse's reviver (bottom-up, as values are made) is the cheapest deep freeze.
  const freezing = (k, v) => (typeof v === "object" && v !== null ? freezeOne(v) : v);
  const frozen = (json) => parse(json, freezing);
  const scope = frozen(g.__scopeJson);
  delete g.__scopeJson;
  // As the host's toText: functions and symbols print nothing.
  const text = (v) => {
    const t = typeof v;
    if (t === "string") return v;
    if (t === "number" || t === "boolean" || t === "bigint") return String(v);
    if (t === "object" && v !== null) return stringify(v) ?? "";
    return "";
  };
  let buf = [], size = 0;
  const write = (s) => {
    size += s.length;
    if (size > ${maxOutputChars}) throw new RangeError("the block's output is larger than ${maxOutputChars} characters");
    buf.push(s);
  };
  const def = (name, value) => defineProperty(g, name, { value, writable: false, enumerable: false, configurable: false });
  def("scope", scope);
  def("echo", function echo(...values) { for (const v of values) write(text(v)); });
  def("print", function print(...values) { write(values.map(text).join(" ") + "\\n"); });
  for (const k of keys(scope)) if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) && !(k in g)) def(k, scope[k]);
  let bound = {};
  def("__bindings", () => bound);
  return {
    bind(json) { bound = frozen(json); },
    take(value) {
      let s = buf.join("");
      if (s === "" && value !== undefined && value !== null) s = text(value);
      buf = []; size = 0; bound = {};
      return s;
    },
  };
})()`;

const reserved = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for function if " +
    "import in instanceof new null return super switch this throw true try typeof var void while with yield let static " +
    "implements interface package private protected public await arguments eval"
  ).split(" "),
);

/** The script a block runs as; the user's code starts on line 1 at column `prefix.length + 1`. */
export function blockScript(code: string, names: string[]): { script: string; prefix: string } {
  const usable = names.filter((n) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(n) && !reserved.has(n));
  const declare = usable.length ? `const { ${usable.join(", ")} } = __bindings();` : "";
  const prefix = `"use strict"; void 0; { ${declare} {`;
  return { script: `${prefix}${code}\n}}`, prefix };
}
