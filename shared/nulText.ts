/**
 * PostgreSQL text (and jsonb) cannot hold a NUL character. Input that carries one, in a
 * request body or in an uploaded file, is refused up front with a 422 on its field instead
 * of failing later in the database.
 */

/** The dotted path of the first string holding a NUL character in `value` ("" for `value` itself), or null. */
export function nulPath(value: unknown): string | null {
  const keys = nulKeys(value, 0);
  return keys === null ? null : keys.reverse().join(".");
}

/**
 * Whether JSON text `text` may parse to a value holding a NUL character. JSON can carry one
 * only as the escape `\u0000` (control characters are invalid unescaped inside its strings),
 * so text without that sequence needs no walk of its parsed value; text with it (or with an
 * escaped backslash before `u0000`) is walked.
 */
export function jsonTextMayHoldNul(text: string): boolean {
  return text.includes("\\u0000");
}

/**
 * The keys leading to the first string holding a NUL in `value`, innermost first, or null.
 * Every request body goes through here, so the walk allocates nothing until it finds one.
 */
function nulKeys(value: unknown, depth: number): string[] | null {
  if (typeof value === "string") return value.includes("\u0000") ? [] : null;
  if (depth > 64 || value === null || typeof value !== "object") return null;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const found = nulKeys((value as Record<string, unknown>)[key], depth + 1);
    if (found !== null) {
      found.push(key);
      return found;
    }
  }
  return null;
}
