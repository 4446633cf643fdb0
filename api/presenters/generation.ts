/**
 * The code generation resource (DESIGN §11): who ran what (template or generator) on which
 * schema, how many files and bytes, and its zip archive as the spec's "Project archive"
 * resource (id, code_generation_id, file_path, file_size, created_at, expires_at) plus its
 * status and download URL.
 */
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { isLive } from "../../shared/generations/archive.ts";
import { downloadName } from "../routes/projects/bundle.router.ts";

export const generationRow = z.object({
  id: z.number(),
  project_id: z.number(),
  user_id: z.number().nullable(),
  user_name: z.string().nullable(),
  user_username: z.string().nullable(),
  template_id: z.number().nullable(),
  template_name: z.string().nullable(),
  generator_id: z.number().nullable(),
  generator_name: z.string().nullable(),
  schema_id: z.number().nullable(),
  variables: z.record(z.string(), z.unknown()),
  file_count: z.number(),
  total_bytes: z.number(),
  created_at: z.date(),
  adjusted_from_id: z.number().nullable(),
  archive_id: z.number().nullable(),
  archive_created_at: z.date().nullable(),
  archive_status: z.enum(["building", "ready", "failed"]).nullable(),
  archive_size: z.number().nullable(),
  archive_expires_at: z.date().nullable(),
  archive_deleted_at: z.date().nullable(),
});
export type GenerationRow = z.infer<typeof generationRow>;

/** Select list and joins for `generationRow` over `code_generations g`. */
export const generationSelect = sql.fragment`
  select g.id, g.project_id, g.user_id, u.name as user_name, u.username as user_username,
    g.template_id, t.name as template_name, g.generator_id, gen.name as generator_name, g.schema_id, g.variables,
    g.file_count, g.total_bytes, g.created_at, g.adjusted_from_id,
    a.id as archive_id, a.created_at as archive_created_at, a.status as archive_status, a.file_size as archive_size, a.expires_at as archive_expires_at, a.deleted_at as archive_deleted_at
  from code_generations g
  left join users u on u.id = g.user_id
  left join templates t on t.id = g.template_id
  left join generators gen on gen.id = g.generator_id
  left join project_archives a on a.code_generation_id = g.id`;

/** The spec's "Project archive", with the archive's state and where to download it. */
export const archiveResource = z.object({
  id: z.number(),
  code_generation_id: z.number(),
  /** The zip's file name as users see it (the storage key stays internal). */
  file_path: z.string(),
  /** Bytes of the zip; null until it is built. */
  file_size: z.number().nullable(),
  created_at: z.string(),
  /** When the zip is removed; null until it is built. */
  expires_at: z.string().nullable(),
  status: z.enum(["building", "ready", "failed", "expired", "deleted"]),
  /** Null once the zip is expired or deleted. */
  download_url: z.string().nullable(),
});

/**
 * The zip's file name as users see it: the name GET /archives/{id}/download saves it under
 * (its template's or generator's name and the generation id), never the storage key.
 */
export const archiveFileName = (row: Pick<GenerationRow, "id" | "template_name" | "generator_name">) =>
  downloadName(`${row.template_name ?? row.generator_name ?? "generation"}-${row.id}`, "zip");

export const generationResource = z.object({
  id: z.number(),
  project_id: z.number(),
  user: z.object({ id: z.number(), name: z.string(), username: z.string() }).nullable(),
  template: z.object({ id: z.number(), name: z.string().nullable() }).nullable(),
  generator: z.object({ id: z.number(), name: z.string().nullable() }).nullable(),
  schema_id: z.number().nullable(),
  variables: z.record(z.string(), z.unknown()),
  file_count: z.number(),
  total_bytes: z.number(),
  created_at: z.string(),
  /** Set on a generation written by applying code adjustments: the generation it started from. */
  adjusted_from_id: z.number().nullable(),
  archive: archiveResource.nullable(),
});

function archiveStatus(row: GenerationRow): z.infer<typeof archiveResource>["status"] | null {
  if (row.archive_status === null) return null;
  if (row.archive_deleted_at) return row.archive_expires_at && row.archive_expires_at <= row.archive_deleted_at ? "expired" : "deleted";
  if (row.archive_status === "ready" && !isLive({ status: "ready", deleted_at: null, expires_at: row.archive_expires_at })) return "expired";
  return row.archive_status;
}

/** A code generation. */
export function presentGeneration(row: GenerationRow): z.infer<typeof generationResource> {
  const status = archiveStatus(row);
  return {
    id: row.id,
    project_id: row.project_id,
    user: row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? "", username: row.user_username ?? "" },
    template: row.template_id === null ? null : { id: row.template_id, name: row.template_name },
    generator: row.generator_id === null ? null : { id: row.generator_id, name: row.generator_name },
    schema_id: row.schema_id,
    variables: row.variables,
    file_count: row.file_count,
    total_bytes: row.total_bytes,
    created_at: row.created_at.toISOString(),
    adjusted_from_id: row.adjusted_from_id,
    archive:
      status === null || row.archive_id === null || row.archive_created_at === null
        ? null
        : {
            id: row.archive_id,
            code_generation_id: row.id,
            file_path: archiveFileName(row),
            file_size: row.archive_size,
            created_at: row.archive_created_at.toISOString(),
            expires_at: row.archive_expires_at?.toISOString() ?? null,
            status,
            download_url: status === "expired" || status === "deleted" ? null : `/api/archives/${row.id}/download`,
          },
  };
}
