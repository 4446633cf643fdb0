/**
 * Project bundles (DESIGN §11): a project exported as one versioned JSON document and
 * imported under another owner. Each area that keeps data in a project registers a
 * section (schemas, templates, …) with its own zod schema and export/import functions;
 * sections import in registration order and share an id map, so later sections can
 * translate references to rows an earlier section created.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import type { CommonQueryMethods } from "../db/pool.ts";
import { sql } from "../db/pool.ts";
import { dict } from "../dict.ts";
import type { FieldErrors } from "../errors.ts";
import { unstorableText } from "../storableText.ts";
import type { Storage } from "../storage/storage.ts";
import { createProject } from "./createProject.ts";

export const BUNDLE_FORMAT = "schemaforge-project";
export const BUNDLE_VERSION = 1;
export const BUNDLE_MAX_BYTES = 10 * 1024 * 1024;

export interface ImportContext {
  projectId: number;
  userId: number;
  /** Old id → new id, per section, for cross-references. */
  ids: Map<string, Map<number, number>>;
  /** Where sections put the files a bundle carries (report images); null: files are left out. */
  storage: Storage | null;
  /** Keys a section put into storage, so the caller can remove them when the import rolls back. */
  stored: string[];
}

/** What a section's export reads besides the database. */
export interface ExportContext {
  /** Where files a section carries are read from (report images); null: files are left out. */
  storage: Storage | null;
}

/** What an import writes besides the database (see ImportContext). */
export type ImportIO = Pick<ImportContext, "storage" | "stored">;

/** What a section's `prepare` may use. */
export interface PrepareContext {
  config: Config;
}

/** A section's data as `import` receives it (`P`, after `prepare`), or its problems keyed below the section (`0.sql_text`). */
export type Prepared<P> = { data: P } | { errors: FieldErrors };

export interface BundleSection<T = unknown, P = T> {
  name: string;
  schema: z.ZodType<T>;
  /**
   * Checks the schema cannot make (limits from the configuration, parsing SQL), run by
   * validate and import alike so that they agree; what it returns is what `import` gets.
   * Without it, `import` gets the parsed data.
   */
  prepare?(data: T, ctx: PrepareContext): Promise<Prepared<P>>;
  export(conn: CommonQueryMethods, projectId: number, ctx: ExportContext): Promise<T>;
  import(tx: CommonQueryMethods, data: P, ctx: ImportContext): Promise<void>;
  /** How many records the section holds (for the validation summary). */
  count(data: T): number;
}

const sections: BundleSection<unknown, unknown>[] = [];

/** Adds a section to every bundle. */
export function registerBundleSection<T, P = T>(section: BundleSection<T, P>): void {
  if (sections.some((s) => s.name === section.name)) throw new Error(`bundle section ${section.name} registered twice`);
  sections.push(section);
}

const projectPart = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(5000).default(""),
  is_public: z.boolean().default(false),
  allow_join_requests: z.boolean().default(false),
  form_designer_snap_to_grid: z.boolean().default(true),
  form_designer_grid_size: z.number().int().min(1).max(200).default(10),
});

const envelope = z.object({
  format: z.literal(BUNDLE_FORMAT, { error: `The format field must be "${BUNDLE_FORMAT}".` }),
  version: z.number().int(),
  exported_at: z.string().optional(),
  project: projectPart,
  sections: z.record(z.string(), z.unknown()).default({}),
});

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  version: number;
  exported_at: string;
  project: z.infer<typeof projectPart>;
  sections: Record<string, unknown>;
}

const projectRow = z.object({
  name: z.string(),
  description: z.string(),
  is_public: z.boolean(),
  allow_join_requests: z.boolean(),
  form_designer_snap_to_grid: z.boolean(),
  form_designer_grid_size: z.number(),
});

/** Builds the bundle of a project. */
export async function exportProject(conn: CommonQueryMethods, projectId: number, io: ExportContext = { storage: null }): Promise<Bundle> {
  const project = await conn.one(sql.type(projectRow)`
    select name, description, is_public, allow_join_requests, form_designer_snap_to_grid, form_designer_grid_size
    from projects where id = ${projectId}`);
  const data: Record<string, unknown> = {};
  for (const section of sections) data[section.name] = await section.export(conn, projectId, io);
  return { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, exported_at: new Date().toISOString(), project, sections: data };
}

export type BundleCheck =
  | { valid: true; bundle: Bundle; parsed: Record<string, unknown>; summary: Record<string, number | string> }
  | { valid: false; errors: Record<string, string[]> };

/**
 * Validates a bundle (already parsed JSON) without writing anything: the envelope, each
 * section's schema, then each section's `prepare`, so that a bundle import would refuse
 * never validates.
 */
export async function checkBundle(input: unknown, size: number, ctx: PrepareContext): Promise<BundleCheck> {
  if (size > BUNDLE_MAX_BYTES) {
    return { valid: false, errors: { bundle: [`The bundle is ${size} bytes; at most ${BUNDLE_MAX_BYTES} bytes can be imported.`] } };
  }
  // PostgreSQL cannot store NUL or a lone surrogate; a bundle uploaded as a file has not been through the body check.
  const unstorable = unstorableText(input);
  if (unstorable !== null) return { valid: false, errors: { [unstorable.path || "bundle"]: [unstorable.message] } };
  const outer = envelope.safeParse(input);
  if (!outer.success) return { valid: false, errors: issuesToErrors(outer.error.issues, []) };
  if (outer.data.version !== BUNDLE_VERSION) {
    return { valid: false, errors: { version: [`Bundle version ${outer.data.version} is not supported; this server reads version ${BUNDLE_VERSION}.`] } };
  }
  const errors: Record<string, string[]> = {};
  const parsed: Record<string, unknown> = {};
  const summary: Record<string, number | string> = { name: outer.data.project.name };
  for (const name of Object.keys(outer.data.sections)) {
    if (!sections.some((s) => s.name === name)) errors[`sections.${name}`] = [`Unknown section ${name}.`];
  }
  for (const section of sections) {
    const raw = outer.data.sections[section.name];
    if (raw === undefined) continue;
    const result = section.schema.safeParse(raw);
    if (!result.success) Object.assign(errors, issuesToErrors(result.error.issues, ["sections", section.name]));
    else {
      parsed[section.name] = result.data;
      summary[section.name] = section.count(result.data);
    }
  }
  if (Object.keys(errors).length) return { valid: false, errors };
  for (const section of sections) {
    if (!section.prepare || parsed[section.name] === undefined) continue;
    const prepared = await section.prepare(parsed[section.name], ctx);
    if ("errors" in prepared) {
      for (const [key, messages] of Object.entries(prepared.errors)) errors[`sections.${section.name}.${key}`] = messages;
    } else parsed[section.name] = prepared.data;
  }
  if (Object.keys(errors).length) return { valid: false, errors };
  return { valid: true, bundle: { ...outer.data, exported_at: outer.data.exported_at ?? "" }, parsed, summary };
}

function issuesToErrors(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[]): Record<string, string[]> {
  const errors = dict<string[]>(); // keys are paths into the uploaded JSON
  for (const issue of issues.slice(0, 50)) {
    const key = [...prefix, ...issue.path].map(String).join(".") || "bundle";
    (errors[key] ??= []).push(issue.message);
  }
  return errors;
}

/** Creates the project of a checked bundle under `ownerId`; returns its id. Files go to `io.storage`, their keys into `io.stored`. */
export async function importProject(
  tx: CommonQueryMethods,
  check: Extract<BundleCheck, { valid: true }>,
  ownerId: number,
  io: ImportIO = { storage: null, stored: [] },
): Promise<number> {
  const p = check.bundle.project;
  const projectId = await createProject(tx, {
    ownerId,
    name: p.name,
    description: p.description,
    isPublic: p.is_public,
    allowJoinRequests: false,
    formDesignerSnapToGrid: p.form_designer_snap_to_grid,
    formDesignerGridSize: p.form_designer_grid_size,
  });
  const ctx: ImportContext = { projectId, userId: ownerId, ids: new Map(), ...io };
  for (const section of sections) {
    const data = check.parsed[section.name];
    if (data !== undefined) await section.import(tx, data, ctx);
  }
  return projectId;
}
