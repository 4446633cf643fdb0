/**
 * Refusals of the archive engine. Each carries a stable `code` (DESIGN §7) so that an upload
 * or import route can answer 422 with it, and a worker can tell a bad template output from a
 * crash. The offending entry path, when there is one, is kept in `entry`.
 */
import { AppError } from "../errors.ts";

/** Every code an {@link ArchiveError} may carry. */
export type ArchiveErrorCode =
  /** An entry path that could escape the extraction folder or is not a plain relative path. */
  | "archive_unsafe_path"
  /** Two entries with the same (normalised) path. */
  | "archive_duplicate_path"
  /** A symbolic link entry (zip-slip through a link). */
  | "archive_symlink"
  /** More entries than the limit allows. */
  | "archive_too_many_entries"
  /** One entry inflates (or declares) more bytes than the per-entry limit. */
  | "archive_entry_too_large"
  /** All entries together inflate to more bytes than the total limit. */
  | "archive_too_large"
  /** An entry inflates far more than its compressed size allows (a zip bomb). */
  | "archive_ratio_exceeded"
  /** Encryption, an unknown compression method, or a device/FIFO entry. */
  | "archive_unsupported"
  /** Not a zip, truncated, overlapping entries, or data that fails its CRC. */
  | "archive_corrupt";

/** A refused archive or entry; status 422 when it reaches a client. */
export class ArchiveError extends AppError {
  /** The entry path involved, as given (may itself be the unsafe part). */
  readonly entry: string | undefined;

  constructor(code: ArchiveErrorCode, message: string, entry?: string) {
    super(422, code, message);
    this.name = "ArchiveError";
    this.entry = entry;
  }
}

/** Quotes an entry path for a message without letting control characters through. */
export const quote = (path: string) => JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
