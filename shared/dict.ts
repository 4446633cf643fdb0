/**
 * Objects keyed by names that users choose (schema, table, field and variable names, error
 * paths). A plain `{}` inherits from Object.prototype: assigning to the key `__proto__`
 * replaces the object's prototype instead of adding an entry, `obj[k] ??= {}` with k =
 * `__proto__` hands back Object.prototype itself (so the next write pollutes every object of
 * the process), and reads of `constructor` or `toString` find inherited functions. An object
 * without a prototype has none of that: every key is an ordinary own property, and
 * JSON.stringify, Object.keys/entries and spreading treat it as any other object.
 */

/** An empty object without a prototype, for entries keyed by user-chosen names. */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** `object[key]` when `key` is an own property of `object` (never an inherited value). */
export function own<T>(object: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
