/**
 * Writing a template as a zip in the layout the import reads (zipLayout.ts), so that export
 * then import gives the same template: same fields, variables in order, files with their
 * names, order, repeat and contents.
 */
import type { ZipEntryInput } from "../archive/zipWriter.ts";
import type { FullTemplate } from "./store.ts";
import { FILES_FOLDER, fileEntryPath, MANIFEST_PATH, MANIFEST_VERSION } from "./zipLayout.ts";

interface ManifestFile {
  file_name: string;
  order: number;
  repeat: string | null;
  source?: string;
}

/**
 * Where each file's content goes (relative to files/): its file_name when that is a plain
 * entry path, else a generated `source` name that no other file uses.
 */
function sourcePaths(files: FullTemplate["files"]): (string | null)[] {
  const plain = files.map((f) => (fileEntryPath(f.file_name) === `${FILES_FOLDER}${f.file_name}` ? f.file_name : null));
  const used = new Set(plain.filter((p): p is string => p !== null));
  let next = 1;
  return plain.map((path) => {
    if (path !== null) return null;
    let source = `_sources/file-${next++}.txt`;
    while (used.has(source)) source = `_sources/file-${next++}.txt`;
    used.add(source);
    return source;
  });
}

/** The entries of a template's zip: template.json, then one entry per file under files/. */
export function templateZipEntries(full: FullTemplate): ZipEntryInput[] {
  const sources = sourcePaths(full.files);
  const files: ManifestFile[] = full.files.map((f, i) => ({
    file_name: f.file_name,
    order: f.order,
    repeat: f.repeat,
    ...(sources[i] ? { source: sources[i] } : {}),
  }));
  const manifest = {
    version: MANIFEST_VERSION,
    name: full.name,
    description: full.description,
    engine_type: full.engine_type,
    content: full.content,
    variables: full.variables.map((v) => ({ name: v.name, description: v.description, type: v.type, required: v.required, default_value: v.default_value ?? null })),
    files,
  };
  return [
    { path: MANIFEST_PATH, content: `${JSON.stringify(manifest, null, 2)}\n` },
    ...full.files.map((f, i) => ({ path: `${FILES_FOLDER}${sources[i] ?? f.file_name}`, content: f.content })),
  ];
}
