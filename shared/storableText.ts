/**
 * Text PostgreSQL cannot store: a NUL character (text and jsonb refuse it) and an unpaired
 * UTF-16 surrogate (jsonb refuses its escape; text would silently get U+FFFD instead). Input
 * that carries either, in a request body or in an uploaded file, is refused up front with a
 * 422 on its field instead of failing later in the database (a 500) or being changed.
 */

export interface UnstorableText {
  /** The dotted path of the string ("" for the value itself). */
  path: string;
  /** What is wrong with it, for the 422's field message. */
  message: string;
}

const NUL_MESSAGE = "The value contains a NUL character; send text, not binary data.";
const SURROGATE_MESSAGE = "The value contains an unpaired UTF-16 surrogate (a \\uD800–\\uDFFF escape without its pair); send valid Unicode text.";

/** The first string (a value or a key) in `value` that PostgreSQL cannot store, or null. */
export function unstorableText(value: unknown): UnstorableText | null {
  const found = walk(value, 0);
  return found === null ? null : { path: found.keys.reverse().join("."), message: found.message };
}

/** A surrogate's escape in JSON text, paired or not. */
const surrogateEscape = /\\u[dD][89a-fA-F]/;

/**
 * Whether JSON text `text` may parse to a value holding text PostgreSQL cannot store. JSON can
 * carry a NUL only as the escape `\u0000` (control characters are invalid unescaped inside its
 * strings) and a lone surrogate only as an escape (UTF-8 cannot encode one; a decoder makes
 * U+FFFD of such bytes), so text without those sequences needs no walk of its parsed value;
 * text with them (or with an escaped backslash before one) is walked.
 */
export function jsonTextMayHoldUnstorable(text: string): boolean {
  return text.includes("\\u0000") || surrogateEscape.test(text);
}

const problemOf = (text: string): string | null => (text.includes("\u0000") ? NUL_MESSAGE : text.isWellFormed() ? null : SURROGATE_MESSAGE);

/**
 * The keys leading to the first string that cannot be stored, innermost first, and why; null
 * when there is none. Every request body goes through here, so the walk allocates nothing
 * until it finds one.
 */
function walk(value: unknown, depth: number): { keys: string[]; message: string } | null {
  if (typeof value === "string") {
    const message = problemOf(value);
    return message === null ? null : { keys: [], message };
  }
  if (depth > 64 || value === null || typeof value !== "object") return null;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const keyProblem = problemOf(key);
    if (keyProblem !== null) return { keys: [key], message: keyProblem };
    const found = walk((value as Record<string, unknown>)[key], depth + 1);
    if (found !== null) {
      found.keys.push(key);
      return found;
    }
  }
  return null;
}
