/**
 * Builds the zip of a code generation into storage (streamed: the files are read with one
 * binary COPY and compressed on the way). Idempotent; after its last failed attempt the
 * archive is marked failed, and a download starts a new build.
 */
import { buildArchive, markArchiveFailed } from "../../shared/generations/archive.ts";
import { archivesBuild } from "../../shared/jobs/kinds.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(archivesBuild, async (payload, { deps, attempt, maxAttempts }) => {
  try {
    return await buildArchive(deps, payload.code_generation_id, deps.config.templates.archiveTtlHours);
  } catch (error) {
    if (attempt >= maxAttempts) await markArchiveFailed(deps.pool, payload.code_generation_id);
    throw error;
  }
});
