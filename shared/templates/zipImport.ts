/**
 * Reading a template from an uploaded zip (layout: zipLayout.ts). Everything is judged before
 * anything is written, in this order, each refusal a 422:
 *
 * 1. the archive (not a zip, bombs, limits, unsafe paths): the ArchiveError's own code, keyed
 *    by the offending entry, or by `file` (the upload field) for the archive as a whole;
 * 2. where template.json is (root or one top-level folder), and that it is a JSON object;
 * 3. each file's content: its entry exists, is UTF-8 text without NUL, and every entry under
 *    files/ is listed; then the create route's rules (templateInput: names, types, defaults,
 *    file-name placeholders and path safety, limits, duplicates). Keys name the archive entry
 *    and, inside template.json, the field: `template.json: variables.2.type`;
 * 4. the engine's compile check of the content and every file: code `template_error`, keyed
 *    `file:line:column` as the compile and execute routes report them.
 */
import { isUtf8 } from "node:buffer";
import { ArchiveError } from "../archive/errors.ts";
import { extractToMemory, type ZipFileEntry } from "../archive/zipReader.ts";
import { AppError, invalid, type FieldErrors } from "../errors.ts";
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepField } from "../jsonDepth.ts";
import { unstorableText } from "../storableText.ts";
import type { TemplateCompiler } from "../template/compiler/pool.ts";
import { TemplateError } from "../template/index.ts";
import { fieldErrors } from "../validation.ts";
import { templateInput, type TemplateInput } from "./input.ts";
import { templateErrorResponse } from "./run.ts";
import { FILES_FOLDER, fileEntryPath, isOsClutter, MANIFEST_PATH, MANIFEST_VERSION, templateZipLimits } from "./zipLayout.ts";

/** The upload field an archive-wide refusal is keyed by. */
export const UPLOAD_FIELD = "file";

/** Where the layout sits in the archive, and the archive's files by normalised path. */
interface Layout {
  /** "" or the single top-level folder with its slash. */
  prefix: string;
  entries: Map<string, Buffer>;
}

type Manifest = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The template held by a zip (a Buffer, or the path of an uploaded file), validated as a
 * whole, its compile check on `compiler`'s threads. @throws AppError 422 (see the module
 * comment); nothing is written by this function.
 */
export async function readTemplateZip(source: Buffer | string, compiler: TemplateCompiler): Promise<TemplateInput> {
  const layout = findLayout(await extract(source));
  const manifestPath = `${layout.prefix}${MANIFEST_PATH}`;
  const manifestKey = (field: string) => (field ? `${manifestPath}: ${field}` : manifestPath);
  const manifest = parseManifest(layout, manifestPath, manifestKey);

  const errors: FieldErrors = {};
  const add = (key: string, message: string) => (errors[key] ??= []).push(message);
  if (manifest.version !== undefined && manifest.version !== MANIFEST_VERSION) {
    add(manifestKey("version"), `This service reads template.json version ${MANIFEST_VERSION}; leave version out or set it to ${MANIFEST_VERSION}.`);
  }
  const files = manifest.files === undefined ? listedByFolder(layout, add) : resolveFiles(manifest.files, layout, add, manifestKey);

  const parsed = templateInput.safeParse({ ...manifest, files: files.values });
  if (!parsed.success) {
    for (const [field, messages] of Object.entries(fieldErrors(parsed.error))) {
      const key = entryKeyOf(field, files) ?? manifestKey(field === "body" ? "" : field);
      for (const message of messages) add(key, message);
    }
  }
  if (Object.keys(errors).length || !parsed.success) throw invalid(errors);

  const check = await compiler.check({ content: parsed.data.content, files: parsed.data.files });
  if (!check.valid) throw templateErrorResponse(new TemplateError(check.errors), null);
  return parsed.data;
}

/** Inflates the archive with the template limits; an ArchiveError becomes a keyed 422. */
async function extract(source: Buffer | string): Promise<ZipFileEntry[]> {
  try {
    return await extractToMemory(source, templateZipLimits);
  } catch (error) {
    if (error instanceof ArchiveError) throw new AppError(422, error.code, error.message, { [error.entry ?? UPLOAD_FIELD]: [error.message] });
    throw error;
  }
}

/** template.json at the root, or inside the one top-level folder everything else is in. */
function findLayout(files: ZipFileEntry[]): Layout {
  const entries = new Map(files.map((f) => [f.path, f.content]));
  if (entries.has(MANIFEST_PATH)) return { prefix: "", entries };
  const tops = new Set(files.filter((f) => !isOsClutter(f.path)).map((f) => f.path.split("/")[0]!));
  const [top] = tops;
  if (tops.size === 1 && entries.has(`${top}/${MANIFEST_PATH}`)) return { prefix: `${top}/`, entries };
  throw invalid({ [MANIFEST_PATH]: ["The archive has no template.json, neither at its root nor in a single top-level folder."] });
}

function parseManifest(layout: Layout, path: string, key: (field: string) => string): Manifest {
  const raw = layout.entries.get(path)!;
  if (!isUtf8(raw)) throw invalid({ [path]: [`${path} is not UTF-8 text.`] });
  const text = raw.toString("utf8").replace(/^\uFEFF/, "");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid({ [path]: [`${path} is not valid JSON: ${(error as Error).message.replace(/\.$/, "")}.`] });
  }
  if (!isPlainObject(value)) throw invalid({ [path]: [`${path} must hold a JSON object with the template's name and, optionally, its description, content, variables and files.`] });
  // The manifest is JSON from outside like a request body: held to the same depth, as the
  // checks after this (a variable's default is any JSON) walk it recursively.
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) {
    const field = tooDeepField(value) ?? "body";
    throw invalid({ [key(field === "body" ? "" : field)]: [`The value is nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays.`] });
  }
  const unstorable = unstorableText(value);
  if (unstorable !== null) throw invalid({ [key(unstorable.path)]: [unstorable.message] });
  return value;
}

/** The files for templateInput, with the archive entry each index took its content from. */
interface ResolvedFiles {
  values: unknown;
  entryOf: Map<number, string>;
  /** Files listed from the folder (no `files` in the manifest): any error of theirs is the entry's. */
  fromFolder: boolean;
}

/** An error of `files.N.content` (or of any field of a folder-listed file) is keyed by the file's entry. */
function entryKeyOf(field: string, files: ResolvedFiles): string | null {
  const match = /^files\.(\d+)\.([a-z_]+)$/.exec(field);
  if (!match || (!files.fromFolder && match[2] !== "content")) return null;
  return files.entryOf.get(Number(match[1])) ?? null;
}

/** The text of a file entry, or null (with an error keyed by the entry) when it is not text. */
function textOf(path: string, data: Buffer, add: (key: string, message: string) => void): string | null {
  if (!isUtf8(data)) add(path, `${path} is not UTF-8 text; template files must be text.`);
  else if (data.includes(0)) add(path, `${path} contains a NUL character; template files must be text.`);
  else return data.toString("utf8");
  return null;
}

function folderEntries(layout: Layout): string[] {
  const folder = `${layout.prefix}${FILES_FOLDER}`;
  return [...layout.entries.keys()].filter((path) => path.startsWith(folder) && !isOsClutter(path.slice(layout.prefix.length))).sort();
}

/** No `files` in the manifest: every entry under files/ is a file named by its path there. */
function listedByFolder(layout: Layout, add: (key: string, message: string) => void): ResolvedFiles {
  const offset = layout.prefix.length + FILES_FOLDER.length;
  const entryOf = new Map<number, string>();
  const values = folderEntries(layout).map((path, index) => {
    entryOf.set(index, path);
    return { file_name: path.slice(offset), content: textOf(path, layout.entries.get(path)!, add) ?? "" };
  });
  return { values, entryOf, fromFolder: true };
}

/** `files` of the manifest: each file's content from `files/<source or file_name>`; every entry there must be used. */
function resolveFiles(listed: unknown, layout: Layout, add: (key: string, message: string) => void, manifestKey: (field: string) => string): ResolvedFiles {
  const entryOf = new Map<number, string>();
  if (!Array.isArray(listed)) return { values: listed, entryOf, fromFolder: false };
  const used = new Set<string>();
  const values = listed.map((file: unknown, index) => {
    if (!isPlainObject(file)) return file;
    const { source, content, ...rest } = file;
    const field = (name: string) => manifestKey(`files.${index}.${name}`);
    if (content !== undefined) add(field("content"), `A file's content is its entry under ${FILES_FOLDER}, not a field of template.json.`);
    if (source !== undefined && typeof source !== "string") {
      add(field("source"), `The source field must be the path of an entry under ${FILES_FOLDER}.`);
      return rest;
    }
    const name = source ?? rest.file_name;
    if (typeof name !== "string") return rest; // templateInput reports the file_name
    const relative = fileEntryPath(name);
    if (relative === null) {
      add(
        field(source !== undefined ? "source" : "file_name"),
        source !== undefined
          ? `The source ${JSON.stringify(name)} is not a plain relative path under ${FILES_FOLDER}.`
          : `The file name ${JSON.stringify(name)} cannot be an archive path; add a "source" naming the file's entry under ${FILES_FOLDER}.`,
      );
      return rest;
    }
    const path = `${layout.prefix}${relative}`;
    const data = layout.entries.get(path);
    if (!data) {
      add(field(source !== undefined ? "source" : "file_name"), `The archive has no entry ${path} for this file.`);
      return rest;
    }
    used.add(path);
    entryOf.set(index, path);
    return { ...rest, content: textOf(path, data, add) ?? "" };
  });
  for (const path of folderEntries(layout)) {
    if (!used.has(path)) add(path, `${path} is not one of the files template.json lists; list it there or leave it out of the archive.`);
  }
  return { values, entryOf, fromFolder: false };
}
