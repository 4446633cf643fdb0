/**
 * PostgreSQL text (and jsonb) cannot hold a NUL character. Input that carries one, in a
 * request body or in an uploaded file, is refused up front with a 422 on its field instead
 * of failing later in the database.
 */

/** The dotted path of the first string holding a NUL character in `value` ("" for `value` itself), or null. */
export function nulPath(value: unknown, path: readonly string[] = [], depth = 0): string | null {
  if (typeof value === "string") return value.includes("\u0000") ? path.join(".") : null;
  if (depth > 64 || value === null || typeof value !== "object") return null;
  for (const [key, item] of Object.entries(value)) {
    const found = nulPath(item, [...path, key], depth + 1);
    if (found !== null) return found;
  }
  return null;
}
