/**
 * Store template media (spec: `POST /store/templates/{id}/media`, multipart `file`,
 * `media_type`, `title`): images and the logo checked by content and re-encoded by the image
 * module, served publicly like template media; videos as https links to known hosts.
 */
import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { AppError, forbidden, invalid, notFound } from "../../../shared/errors.ts";
import { checkImage, defaultImageLimits, ImageRejected } from "../../../shared/media/images.ts";
import { deleteStoreMedia, findStoreMedia, insertStoreMedia, isKnownVideoUrl, MAX_STORE_MEDIA, VIDEO_HOSTS } from "../../../shared/store/media.ts";
import { findStoreTemplate } from "../../../shared/store/catalog.ts";
import { currentUser } from "../../context.ts";
import { presentStoreMedia, presentStoreTemplate } from "../../presenters/storeTemplate.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { defineRoute } from "../route.ts";
import { canViewStoreTemplate, storeTemplateForEdit } from "./load.ts";
import { storeIdParams, storeMediaResource, storeTemplateResource } from "./store.schema.ts";

const tags = ["Template store"];
const FIELD = "file";

interface UploadedFile {
  filepath: string;
}
const isUploadedFile = (value: unknown): value is UploadedFile =>
  value !== null && typeof value === "object" && typeof (value as UploadedFile).filepath === "string";

const uploadBody = z
  .object({
    media_type: z.enum(["image", "logo", "video"]).default("image"),
    title: z.string().trim().max(255).optional(),
    video_url: z.string().max(2048).optional(),
    [FIELD]: z.unknown().optional(),
  })
  .loose()
  .superRefine((body, ctx) => {
    if (body.media_type === "video") {
      if (!body.video_url || !isKnownVideoUrl(body.video_url)) {
        ctx.addIssue({ code: "custom", path: ["video_url"], message: `A video is an https link to one of: ${VIDEO_HOSTS.join(", ")}.` });
      }
      if (body[FIELD] !== undefined) ctx.addIssue({ code: "custom", path: [FIELD], message: "A video is a link (video_url); send no file with it." });
    } else if (!isUploadedFile(body[FIELD])) {
      ctx.addIssue({ code: "custom", path: [FIELD], message: "Upload one image file in the file field." });
    }
  });

const upload = defineRoute({
  method: "post",
  path: "/store/templates/{id}/media",
  summary: "Add an image, the logo or a video link to a store template",
  description: `Multipart: \`file\` (PNG, JPEG, GIF, WebP or AVIF up to MEDIA_MAX_BYTES, checked by content and re-encoded without metadata; SVG refused), \`media_type\` (\`image\`, \`logo\` or \`video\`), \`title\`; a video sends \`video_url\` (https on ${VIDEO_HOSTS.join(", ")}). A new logo replaces the old one; at most ${MAX_STORE_MEDIA} media. The seller only.`,
  tags,
  auth: "bearer",
  params: storeIdParams,
  body: uploadBody,
  bodyKind: "multipart",
  responses: { 201: { description: "Stored: the media item and the template", schema: z.object({ message: z.string(), media: storeMediaResource, store_template: storeTemplateResource }) } },
  handler: async (ctx, { params, body }) => {
    const { pool, storage, config } = ctx.deps;
    const user = currentUser(ctx);
    await storeTemplateForEdit(pool, params.id, user);
    const title = body.title || null;
    let key: string | null = null;
    let image: Awaited<ReturnType<typeof checkImage>> | null = null;
    if (body.media_type !== "video") {
      const file = body[FIELD] as UploadedFile;
      const { size } = await stat(file.filepath);
      try {
        image = await checkImage(size > config.media.maxBytes ? Buffer.alloc(config.media.maxBytes + 1) : await readFile(file.filepath), {
          ...defaultImageLimits,
          maxBytes: config.media.maxBytes,
        });
      } catch (error) {
        if (error instanceof ImageRejected) throw new AppError(422, error.code, error.message, { [FIELD]: [error.message] });
        throw error;
      }
      key = `media/store/${params.id}/${randomBytes(12).toString("hex")}.${image.extension}`;
      await storage.put(key, image.data, { contentType: image.contentType });
    }
    let mediaId = 0;
    try {
      mediaId = await pool.transaction(async (tx) => {
        await storeTemplateForEdit(tx, params.id, user);
        const id = await insertStoreMedia(
          tx,
          image && key
            ? { storeTemplateId: params.id, title, mediaType: body.media_type as "logo" | "image", storageKey: key, contentType: image.contentType, byteSize: image.data.length, width: image.width, height: image.height, sha256: image.sha256 }
            : { storeTemplateId: params.id, title, mediaType: "video", videoUrl: body.video_url! },
        );
        if (id === null) throw invalid({ [FIELD]: [`A store template holds at most ${MAX_STORE_MEDIA} media; delete one first.`] });
        return id;
      });
    } catch (error) {
      if (key) await storage.delete(key);
      throw error;
    }
    const row = (await findStoreTemplate(pool, params.id, user.id))!;
    const item = row.media.find((m) => m.id === mediaId)!;
    ctx.status = 201;
    ctx.body = { message: "Media stored.", media: presentStoreMedia(item, config.appUrl), store_template: presentStoreTemplate(row, user.id, config.appUrl) };
  },
});

const serve = defineRoute({
  method: "get",
  path: "/store/media/{id}",
  summary: "An image or the logo of a published store template (public)",
  description: "No token needed. Served as re-encoded at upload with its image type, `nosniff`, a script-free CSP, a strong ETag and immutable caching.",
  tags,
  auth: "public",
  params: storeIdParams,
  responses: { 200: { description: "The image", contentType: "image/*" }, 304: { description: "Not modified" } },
  handler: async (ctx, { params }) => {
    const row = await findStoreMedia(ctx.deps.pool, params.id);
    if (!row || !row.storage_key || !canViewStoreTemplate(null, row)) throw notFound("Media");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Content-Security-Policy", "default-src 'none'; sandbox");
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.set("ETag", `"${row.sha256}"`);
    if (ctx.get("If-None-Match").split(",").some((tag) => tag.trim().replace(/^W\//, "") === `"${row.sha256}"`)) {
      ctx.status = 304;
      return;
    }
    const file = await ctx.deps.storage.read(row.storage_key);
    if (!file) throw notFound("Media");
    ctx.type = row.content_type!;
    ctx.set("Content-Length", String(file.info.size));
    ctx.body = file.stream;
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/store/media/{id}",
  summary: "Delete a media item of a store template (the seller)",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await findStoreMedia(tx, params.id);
      if (!row || !canViewStoreTemplate(user, row)) throw notFound("Media");
      if (row.seller_id !== user.id) throw forbidden("Only the seller may change this store template.");
      await deleteStoreMedia(tx, row.id);
    });
    ctx.body = { message: "Media deleted." };
  },
});

export const storeMediaRoutes = [upload, serve, remove];
