/**
 * Template media in the database (spec "Template media"): images whose bytes live in
 * storage under `storage_key`, and linked videos. A template has at most one logo.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const mediaTypes = ["logo", "image", "video"] as const;
export type MediaType = (typeof mediaTypes)[number];

/** Media a template may hold at most. */
export const MAX_MEDIA_PER_TEMPLATE = 20;

export const mediaRow = z.object({
  id: z.number(),
  template_id: z.number(),
  media_type: z.enum(mediaTypes),
  title: z.string().nullable(),
  storage_key: z.string().nullable(),
  content_type: z.string().nullable(),
  byte_size: z.number().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  sha256: z.string().nullable(),
  video_url: z.string().nullable(),
  user_id: z.number().nullable(),
  created_at: z.date(),
});
export type MediaRow = z.infer<typeof mediaRow>;

const columns = sql.fragment`m.id, m.template_id, m.media_type, m.title, m.storage_key, m.content_type, m.byte_size, m.width, m.height, m.sha256, m.video_url, m.user_id, m.created_at`;

/** The media of a template, logo first, then in upload order. */
export async function listMedia(conn: CommonQueryMethods, templateId: number): Promise<readonly MediaRow[]> {
  return conn.any(sql.type(mediaRow)`
    select ${columns} from template_media m where m.template_id = ${templateId}
    order by m.media_type = 'logo' desc, m.id`);
}

/** One media row with the project of its template (null for a top-level template), or null. */
export async function findMedia(conn: CommonQueryMethods, id: number): Promise<(MediaRow & { project_id: number | null }) | null> {
  return conn.maybeOne(sql.type(mediaRow.extend({ project_id: z.number().nullable() }))`
    select ${columns}, t.project_id from template_media m join templates t on t.id = m.template_id where m.id = ${id}`);
}

/**
 * A media row that may be served publicly: its template still exists and, for a project
 * template, the project is not deleted.
 */
export async function findServableMedia(conn: CommonQueryMethods, id: number): Promise<MediaRow | null> {
  return conn.maybeOne(sql.type(mediaRow)`
    select ${columns} from template_media m
    join templates t on t.id = m.template_id
    left join projects p on p.id = t.project_id
    where m.id = ${id} and m.storage_key is not null and (t.project_id is null or p.deleted_at is null)`);
}

/** How many media a template holds. */
export async function countMedia(conn: CommonQueryMethods, templateId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from template_media where template_id = ${templateId}`);
}

/** What a new media row records: an image's stored file, or a video's link. */
export type NewMedia = {
  templateId: number;
  userId: number;
  title: string | null;
} & (
  | { mediaType: "logo" | "image"; storageKey: string; contentType: string; byteSize: number; width: number; height: number; sha256: string }
  | { mediaType: "video"; videoUrl: string }
);

/** Inserts a media row; a new logo replaces the template's previous one. */
export async function insertMedia(tx: CommonQueryMethods, media: NewMedia): Promise<MediaRow> {
  if (media.mediaType === "logo") {
    await tx.query(sql.type(z.object({}))`delete from template_media where template_id = ${media.templateId} and media_type = 'logo'`);
  }
  const image = media.mediaType === "video" ? null : media;
  return tx.one(sql.type(mediaRow)`
    insert into template_media as m (template_id, media_type, title, storage_key, content_type, byte_size, width, height, sha256, video_url, user_id)
    values (${media.templateId}, ${media.mediaType}, ${media.title}, ${image?.storageKey ?? null}, ${image?.contentType ?? null},
      ${image?.byteSize ?? null}, ${image?.width ?? null}, ${image?.height ?? null}, ${image?.sha256 ?? null},
      ${media.mediaType === "video" ? media.videoUrl : null}, ${media.userId})
    returning ${columns}`);
}

/** Deletes a media row (its storage file goes to the garbage list through the table's trigger). */
export async function deleteMedia(tx: CommonQueryMethods, id: number): Promise<boolean> {
  const gone = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`delete from template_media where id = ${id} returning id`);
  return gone !== null;
}
