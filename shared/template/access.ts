/**
 * Generated property reads. A template path such as `table.fields` becomes a read of an own
 * property: values are plain JSON, so for most keys a direct read is already an own read, and
 * V8 caches it per site; keys that some prototype carries go through a helper that checks.
 */

/** A JavaScript string literal for `s` (the only way template text enters generated code). */
export const q = (s: string) => JSON.stringify(s);

/**
 * Keys that a JSON value can only hold as its own property: none of the names its prototypes
 * carry (`constructor`, `toString`, `map`, `charAt`, …).
 */
const inherited = new Set<string>();
for (const proto of [Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype]) {
  for (const key of Object.getOwnPropertyNames(proto)) inherited.add(key);
}
inherited.delete("length"); // own on arrays and strings, absent from the other prototypes

/** Whether a direct read of `key` can only find an own property of a JSON value. */
export const safeKey = (key: string) => !inherited.has(key);

/**
 * Code reading own property `key` of the value of `base` (undefined below null, undefined or a
 * scalar). `simple` says `base` is a plain variable that may be read twice; otherwise it is
 * evaluated once into the temporary `t`.
 */
export function member(base: string, key: string, simple: boolean): string {
  if (!safeKey(key)) return `$P(${base}, ${q(key)})`;
  return simple ? `(${base} == null ? undefined : ${base}[${q(key)}])` : `((t = ${base}) == null ? undefined : t[${q(key)}])`;
}
