/**
 * Template media (DESIGN §11: `POST …/templates/{t}/media`, `GET|DELETE /template-media/{id}`;
 * spec: serve is public). Images are checked by their content and re-encoded by
 * shared/media/images.ts before they are stored; a video is a link. The public read serves
 * only the stored, re-encoded bytes, with their own image type, `nosniff`, a sandboxing CSP
 * and a strong ETag; the bytes behind an id never change, so caches may keep them for good.
 */
import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { invalid, notFound, AppError } from "../../../shared/errors.ts";
import { checkImage, defaultImageLimits, ImageRejected } from "../../../shared/media/images.ts";
import { countMedia, deleteMedia, findMedia, findServableMedia, insertMedia, listMedia, MAX_MEDIA_PER_TEMPLATE, mediaTypes } from "../../../shared/templates/media.ts";
import { currentUser } from "../../context.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { presentTemplateMedia, templateMediaResource } from "../../presenters/templateMedia.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { templateForEdit, templateForRead } from "./load.ts";
import { projectTemplateParams } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Templates"];
const FIELD = "file";

/** A file part as the multipart middleware hands it over. */
interface UploadedFile {
  filepath: string;
  size: number;
}
const isUploadedFile = (value: unknown): value is UploadedFile =>
  value !== null && typeof value === "object" && typeof (value as UploadedFile).filepath === "string";

const text = (max: number) => z.string().trim().max(max);

/** The text fields of the upload form; the file part is checked separately. */
const uploadBody = z
  .object({
    media_type: z.enum(mediaTypes).default("image"),
    title: text(255).optional(),
    video_url: z.url({ protocol: /^https?$/, error: "The video url must be an http(s) URL." }).max(2048).optional(),
    [FIELD]: z.unknown().optional(),
  })
  .loose()
  .superRefine((body, ctx) => {
    if (body.media_type === "video") {
      if (!body.video_url) ctx.addIssue({ code: "custom", path: ["video_url"], message: "The video url field is required for a video." });
      if (body[FIELD] !== undefined) ctx.addIssue({ code: "custom", path: [FIELD], message: "A video is a link (video_url); send no file with it." });
    } else {
      if (body.video_url !== undefined) ctx.addIssue({ code: "custom", path: ["video_url"], message: `The video url field is only for media_type video.` });
      if (Array.isArray(body[FIELD])) ctx.addIssue({ code: "custom", path: [FIELD], message: "Upload one image at a time." });
      else if (!isUploadedFile(body[FIELD])) ctx.addIssue({ code: "custom", path: [FIELD], message: `The ${FIELD} field must be an image file.` });
    }
  });

/** Reads the uploaded image and checks it. @throws 422 on the file field */
async function checkedUpload(file: UploadedFile, maxBytes: number) {
  // The size is known before anything is read: a large upload is refused without loading it.
  const { size } = await stat(file.filepath);
  try {
    return await checkImage(size > maxBytes ? Buffer.alloc(maxBytes + 1) : await readFile(file.filepath), { ...defaultImageLimits, maxBytes });
  } catch (error) {
    if (error instanceof ImageRejected) throw new AppError(422, error.code, error.message, { [FIELD]: [error.message] });
    throw error;
  }
}

const upload = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates/{templateId}/media",
  summary: "Add an image, the logo or a video link to a template",
  description: [
    "Multipart: `file` (PNG, JPEG, GIF, WebP or AVIF, at most MEDIA_MAX_BYTES; checked by its content, re-encoded without metadata),",
    "`media_type` (`image`, the default, `logo` or `video`), `title` (optional); a video sends `video_url` instead of a file.",
    "SVG is refused (it can carry scripts), as is anything that is not one of those image formats (422 with code `image_svg`,",
    "`image_type`, `image_too_large`, `image_dimensions` or `image_unreadable`). A new logo replaces the previous one;",
    `a template holds at most ${MAX_MEDIA_PER_TEMPLATE} media. Needs the right to edit the project's content.`,
  ].join(" "),
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: uploadBody,
  bodyKind: "multipart",
  responses: { ...projectStateResponses, 201: { description: "Stored", schema: z.object({ message: z.string(), media: templateMediaResource }) } },
  handler: async (ctx, { params, body }) => {
    const { pool, storage, config } = ctx.deps;
    const user = currentUser(ctx);
    // Who may not add media here learns nothing about the upload.
    const { template } = await pool.transaction((tx) => templateForEdit(tx, params.projectId, params.templateId, user));
    const title = body.title || null;
    if (body.media_type === "video") {
      const row = await pool.transaction(async (tx) => {
        await templateForEdit(tx, params.projectId, params.templateId, user);
        await assertRoom(tx, template.id);
        return insertMedia(tx, { templateId: template.id, userId: user.id, title, mediaType: "video", videoUrl: body.video_url! });
      });
      ctx.status = 201;
      ctx.body = { message: "Video added.", media: presentTemplateMedia(row, config.appUrl) };
      return;
    }
    const image = await checkedUpload(body[FIELD] as UploadedFile, config.media.maxBytes);
    const key = `media/templates/${template.id}/${randomBytes(12).toString("hex")}.${image.extension}`;
    await storage.put(key, image.data, { contentType: image.contentType });
    let row;
    try {
      row = await pool.transaction(async (tx) => {
        await templateForEdit(tx, params.projectId, params.templateId, user);
        // The logo replaces the previous one, which is not counted against the room.
        if (body.media_type !== "logo") await assertRoom(tx, template.id);
        return insertMedia(tx, {
          templateId: template.id,
          userId: user.id,
          title,
          mediaType: body.media_type as "logo" | "image",
          storageKey: key,
          contentType: image.contentType,
          byteSize: image.data.length,
          width: image.width,
          height: image.height,
          sha256: image.sha256,
        });
      });
    } catch (error) {
      await storage.delete(key);
      throw error;
    }
    ctx.status = 201;
    ctx.body = { message: body.media_type === "logo" ? "Logo stored." : "Image stored.", media: presentTemplateMedia(row, config.appUrl) };
  },
});

/** @throws 422 when the template is full. */
async function assertRoom(tx: Parameters<typeof countMedia>[0], templateId: number): Promise<void> {
  if ((await countMedia(tx, templateId)) >= MAX_MEDIA_PER_TEMPLATE) {
    throw invalid({ [FIELD]: [`A template holds at most ${MAX_MEDIA_PER_TEMPLATE} media; delete one first.`] });
  }
}

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/templates/{templateId}/media",
  summary: "The media of a template, logo first",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { 200: { description: "Media", schema: z.object({ data: z.array(templateMediaResource) }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { data: (await listMedia(ctx.deps.pool, template.id)).map((row) => presentTemplateMedia(row, ctx.deps.config.appUrl)) };
  },
});

const serve = defineRoute({
  method: "get",
  path: "/template-media/{id}",
  summary: "An image of a template (public)",
  description:
    "No token needed. Served as stored (re-encoded at upload) with its image type, `X-Content-Type-Options: nosniff`, a CSP that forbids scripts, a strong `ETag` (`If-None-Match` → 304) and `Cache-Control: public, max-age=31536000, immutable`: the bytes behind an id never change. Videos are links (`video_url`) and are not served here.",
  tags,
  auth: "public",
  params: idParams,
  responses: {
    200: { description: "The image", contentType: "image/*" },
    304: { description: "Not modified (the ETag matches)" },
  },
  handler: async (ctx, { params }) => {
    const { pool, storage } = ctx.deps;
    const row = await findServableMedia(pool, params.id);
    if (!row) throw notFound("Media");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Content-Security-Policy", "default-src 'none'; sandbox");
    ctx.set("Cross-Origin-Resource-Policy", "cross-origin");
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.set("ETag", `"${row.sha256}"`);
    ctx.set("Content-Disposition", `inline; filename="template-media-${row.id}.${row.content_type!.split("/")[1]!.replace("jpeg", "jpg")}"`);
    // A revalidation answers from the row alone; the file is read only to be sent.
    if (etagMatches(ctx.get("If-None-Match"), row.sha256!)) {
      ctx.status = 304;
      return;
    }
    const file = await storage.read(row.storage_key!);
    if (!file) throw notFound("Media");
    ctx.type = row.content_type!;
    ctx.set("Content-Length", String(file.info.size));
    ctx.body = file.stream;
  },
});

/** Whether an If-None-Match header names the strong ETag of `sha256` (weak comparison, RFC 9110 §13.1.2). */
export function etagMatches(header: string, sha256: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const value = tag.trim();
    return value === "*" || value.replace(/^W\//, "") === `"${sha256}"`;
  });
}

const remove = defineRoute({
  method: "delete",
  path: "/template-media/{id}",
  summary: "Delete a media item of a template",
  description: "Needs the right to edit the project's content; whoever does not see the project gets 404. The image file is removed from storage by the hourly media sweep.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const media = await findMedia(tx, params.id);
      if (!media || media.project_id === null) throw notFound("Media");
      try {
        await projectForWrite(tx, media.project_id, user, "content");
      } catch (error) {
        if ((error as { status?: number }).status === 404) throw notFound("Media");
        throw error;
      }
      if (!(await deleteMedia(tx, media.id))) throw notFound("Media");
    });
    ctx.body = { message: "Media deleted." };
  },
});

export const templateMediaRoutes = [upload, list, serve, remove];
