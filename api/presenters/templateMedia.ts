/**
 * The Template media resource (spec: id, media_type, file_path for images and logos,
 * video_url for videos, title), plus what a client needs to lay an image out before it
 * loads. `file_path` is the public address of the image under the API; `url` the same,
 * absolute. The `v` parameter changes with the content, for caches that key on the URL.
 */
import { z } from "zod";
import { mediaTypes, type MediaRow } from "../../shared/templates/media.ts";

export const templateMediaResource = z.object({
  id: z.number(),
  template_id: z.number(),
  media_type: z.enum(mediaTypes),
  title: z.string().nullable(),
  file_path: z.string().nullable(),
  url: z.string().nullable(),
  video_url: z.string().nullable(),
  content_type: z.string().nullable(),
  size: z.number().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  created_at: z.string(),
});
export type TemplateMediaResource = z.infer<typeof templateMediaResource>;

/** One media item; `appUrl` makes `url` absolute. */
export function presentTemplateMedia(row: MediaRow, appUrl: string): TemplateMediaResource {
  const filePath = row.storage_key && row.sha256 ? `/api/template-media/${row.id}?v=${row.sha256.slice(0, 16)}` : null;
  return {
    id: row.id,
    template_id: row.template_id,
    media_type: row.media_type,
    title: row.title,
    file_path: filePath,
    url: filePath && `${appUrl}${filePath}`,
    video_url: row.video_url,
    content_type: row.content_type,
    size: row.byte_size,
    width: row.width,
    height: row.height,
    created_at: row.created_at.toISOString(),
  };
}
