/**
 * The bytes of a report image (`GET /projects/{p}/reports/{r}/images/{id}`): whoever may read
 * the report may download its images. Served as stored (re-encoded at upload) with its image
 * type and nothing a browser would run: `nosniff`, a CSP without scripts; a strong ETag from
 * the image's SHA-256 (`If-None-Match` → 304), cached privately since it needs a token.
 */
import { z } from "zod";
import { notFound } from "../../../shared/errors.ts";
import { findReport, reportImages } from "../../../shared/forms/projectStore.ts";
import { currentUser } from "../../context.ts";
import { projectForRead } from "../../policies/projectGuard.ts";
import { defineRoute } from "../route.ts";
import { etagMatches } from "../templates/media.router.ts";
import { reportImageParams } from "./projectForms.schema.ts";

const download = defineRoute({
  method: "get",
  path: "/projects/{projectId}/reports/{reportId}/images/{imageId}",
  summary: "Download an image of a report",
  description:
    "Needs the right to read the report's project. The image as stored (re-encoded at upload) with its image type, `X-Content-Type-Options: nosniff`, a CSP that forbids scripts, a strong `ETag` (`If-None-Match` → 304) and `Cache-Control: private`; `?download=1` asks for an attachment.",
  tags: ["Project reports"],
  auth: "bearer",
  params: reportImageParams,
  query: z.object({ download: z.enum(["0", "1"]).optional() }),
  responses: {
    200: { description: "The image", contentType: "image/*" },
    304: { description: "Not modified (the ETag matches)" },
    404: { description: "The project, report or image is not visible to the caller" },
  },
  handler: async (ctx, { params, query }) => {
    const { pool, storage } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const report = await findReport(pool, project.id, params.reportId);
    const image = report && (await reportImages(pool, [report.id])).find((row) => row.id === params.imageId);
    if (!image) throw notFound("Report image");
    const extension = image.content_type.split("/")[1]!.replace("jpeg", "jpg");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Content-Security-Policy", "default-src 'none'; sandbox");
    ctx.set("Cache-Control", "private, max-age=3600");
    ctx.set("ETag", `"${image.sha256}"`);
    ctx.set("Content-Disposition", `${query.download === "1" ? "attachment" : "inline"}; filename="report-${report.id}-image-${image.id}.${extension}"`);
    if (etagMatches(ctx.get("If-None-Match"), image.sha256)) {
      ctx.status = 304;
      return;
    }
    const file = await storage.read(image.storage_key);
    if (!file) throw notFound("Report image");
    ctx.type = image.content_type;
    ctx.set("Content-Length", String(file.info.size));
    ctx.body = file.stream;
  },
});

export const reportImageRoutes = [download];
