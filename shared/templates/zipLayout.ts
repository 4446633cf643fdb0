/**
 * The zip layout of one template, shared by the import (POST …/templates/import) and the
 * export (GET …/templates/{t}/export), so that an exported template imports unchanged:
 *
 *   template.json   the manifest: {version?, name, description?, engine_type?, content?,
 *                   variables?: [{name, description?, type, required?, default_value?}],
 *                   files?: [{file_name, order?, repeat?, source?}]}
 *   files/<path>    the content of each template file, UTF-8 text
 *
 * A file's content is the entry `files/<source>` when the manifest gives `source`, else
 * `files/<file_name>` (placeholders and all: `files/models/{:table.name|pascal:}.ts`). The
 * export writes `source` only for a file_name that is not itself a plain entry path.
 * Uploads may wrap all of it in one top-level folder (as zips made by OS tools do).
 */
import { ArchiveError } from "../archive/errors.ts";
import { normaliseEntryPath } from "../archive/entryPath.ts";
import type { ZipReadLimits } from "../archive/zipReader.ts";
import { MAX_FILES } from "./input.ts";

export const MANIFEST_PATH = "template.json";
export const FILES_FOLDER = "files/";
/** The manifest version the export writes and the import accepts (the field is optional on import). */
export const MANIFEST_VERSION = 1;

/**
 * Read limits for template zips: the files of one template, its manifest and some room for
 * what OS tools add (`__MACOSX/`, `.DS_Store`). A file's text is at most MAX_CONTENT_CHARS
 * characters (at most 4 MB of UTF-8); the manifest carries the main content and up to 200
 * variable descriptions and defaults, hence the larger per-entry room.
 */
export const templateZipLimits: ZipReadLimits = {
  maxEntries: 2 * MAX_FILES + 50,
  maxEntrySize: 16 * 1024 * 1024,
  maxTotalSize: 64 * 1024 * 1024,
  maxRatio: 200,
  ratioFloor: 1024 * 1024,
};

/** The normalised entry path of a file's content (below `files/`), or null when `name` cannot be one. */
export function fileEntryPath(name: string): string | null {
  try {
    return normaliseEntryPath(`${FILES_FOLDER}${name}`);
  } catch (error) {
    if (error instanceof ArchiveError) return null;
    throw error;
  }
}

/** Entries that OS archivers add beside the real content; ignored when judging a layout. */
export function isOsClutter(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return path.startsWith("__MACOSX/") || base === ".DS_Store" || base === "Thumbs.db" || base === "desktop.ini";
}
