/**
 * The name an uploaded file is kept and served under: the last part of whatever path the
 * client sent, without control or bidirectional-override characters, without quotes or
 * characters Windows forbids, at most 255 characters; never empty.
 */

// eslint-disable-next-line no-control-regex -- removing control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069"*:<>?|\\/]/g;

/** A safe file name for `original` (the multipart part's name). */
export function sanitizeFileName(original: string | null | undefined): string {
  const last = (original ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = last.replace(UNSAFE, "").replace(/\s+/g, " ").trim().replace(/^\.+/, "");
  const limited = [...cleaned].slice(0, 255).join("");
  return limited === "" ? "file" : limited;
}
