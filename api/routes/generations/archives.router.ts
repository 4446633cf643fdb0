/**
 * Archives of code generations (spec "Deployments": GET /archives/{id}/download and
 * DELETE /archives/{id}; the id is the code generation's).
 *
 * A download streams the zip from storage with its length. While the zip is still being
 * built the request waits for the build (up to SYNC_WAIT_MS) and then answers 202 with the
 * build job; a failed or cancelled build, or a zip missing from storage, is rebuilt on demand. An
 * expired or deleted archive is 404: the generation and its files stay, the zip is gone.
 */
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { notFound } from "../../../shared/errors.ts";
import { archiveRow, findArchive, isLive, type ArchiveRow } from "../../../shared/generations/archive.ts";
import { awaitJob } from "../../../shared/jobs/await.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { presentJob } from "../../../shared/jobs/events.ts";
import { archivesBuild } from "../../../shared/jobs/kinds.ts";
import { findJob } from "../../../shared/jobs/records.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { readForRequest, sendStoredFile } from "../../byteRanges.ts";
import { acceptedResponse } from "../../jobResponse.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { downloadName } from "../projects/bundle.router.ts";
import { defineRoute } from "../route.ts";
import { generationForRead, generationForWrite } from "./load.ts";
import { projectArchivedResponse, projectLockedResponse } from "../projectStates.ts";

const tags = ["Code generations"];
const gone = () => notFound("Archive");

/** Starts a new build of an archive whose zip failed or went missing; returns the job id. */
async function rebuild(ctx: AppContext, archive: ArchiveRow, projectId: number, userId: number): Promise<number> {
  return ctx.deps.pool.transaction(async (tx) => {
    const job = await enqueue(tx, archivesBuild, { code_generation_id: archive.code_generation_id }, { userId, projectId });
    await tx.query(sql.type(ignoredRow)`
      update project_archives set status = 'building', job_id = ${job.id} where id = ${archive.id} and deleted_at is null`);
    return job.id;
  });
}

const download = defineRoute({
  method: "get",
  path: "/archives/{id}/download",
  summary: "Download the zip of a code generation",
  tags,
  auth: "bearer",
  params: idParams,
  responses: {
    200: { description: "The zip (streamed); `Range` and `If-Range` resume a cut-off download", contentType: "application/zip" },
    206: { description: "The byte range asked for (`Content-Range`)", contentType: "application/zip" },
    416: { description: "The range is not within the zip (`Content-Range: bytes */<size>`)" },
    ...acceptedResponse,
  },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const { pool, storage, hub, config } = ctx.deps;
    const { generation } = await generationForRead(pool, params.id, user);
    let archive = await findArchive(pool, generation.id);
    if (!archive || archive.deleted_at || (archive.expires_at && archive.expires_at.getTime() <= Date.now())) throw gone();
    if (archive.status === "failed" || (archive.status === "ready" && !(archive.file_path && (await storage.stat(archive.file_path))))) {
      archive = { ...archive, status: "building", job_id: await rebuild(ctx, archive, generation.project_id, user.id) };
    }
    if (archive.status === "building") {
      // A build whose job was cancelled (or whose record is gone) will never finish: start another.
      const building = archive.job_id === null ? null : await findJob(pool, archive.job_id);
      const jobId = building && building.status !== "cancelled" ? building.id : await rebuild(ctx, archive, generation.project_id, user.id);
      const job = await awaitJob(pool, hub, jobId, config.syncWaitMs);
      archive = await findArchive(pool, generation.id);
      if (!archive || !isLive(archive)) {
        if (archive?.status === "building") {
          ctx.status = 202;
          ctx.set("Location", `/api/jobs/${job.id}`);
          ctx.set("Retry-After", "2");
          ctx.body = { message: "The archive is still being built; try again shortly or follow the job.", job: presentJob((await findJob(pool, job.id)) ?? job) };
          return;
        }
        throw gone();
      }
    }
    const file = archive.file_path ? await readForRequest(ctx, storage, archive.file_path) : null;
    if (!file) throw gone();
    const base = generation.template_name ?? generation.generator_name ?? "generation";
    ctx.set("Content-Disposition", `attachment; filename="${downloadName(`${base}-${generation.id}`, "zip")}"`);
    ctx.set("Cache-Control", "private, no-store");
    ctx.type = "application/zip";
    sendStoredFile(ctx, file);
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/archives/{id}",
  summary: "Delete the zip of a code generation (the generation and its files stay)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectLockedResponse, ...projectArchivedResponse, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const filePath = await ctx.deps.pool.transaction(async (tx) => {
      const { generation } = await generationForWrite(tx, params.id, user);
      const archive = await tx.maybeOne(sql.type(archiveRow.pick({ id: true, file_path: true, deleted_at: true }))`
        select id, file_path, deleted_at from project_archives where code_generation_id = ${generation.id} for update`);
      if (!archive || archive.deleted_at) throw gone();
      await tx.query(sql.type(ignoredRow)`update project_archives set deleted_at = now() where id = ${archive.id}`);
      return archive.file_path;
    });
    if (filePath) await ctx.deps.storage.delete(filePath);
    ctx.body = { message: "Archive deleted." };
  },
});

export const archiveRoutes = [download, remove];
