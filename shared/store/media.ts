/**
 * Media of store templates: images (re-encoded by shared/media/images.ts, bytes in storage)
 * and the logo, and videos as links to known hosts. Deleted rows leave their storage keys to
 * the media sweep (trigger in migration 0040).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { lockStoreTemplate, storeStatuses } from "./catalog.ts";

/** Media one store template may hold at most (the logo included). */
export const MAX_STORE_MEDIA = 20;

/** Hosts a video link may point at. */
export const VIDEO_HOSTS = ["youtube.com", "www.youtube.com", "youtu.be", "vimeo.com", "player.vimeo.com", "www.vimeo.com"];

/** Whether `url` is an https link to a known video host. */
export const isKnownVideoUrl = (url: string) => {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" && VIDEO_HOSTS.includes(parsed.hostname.toLowerCase());
  } catch {
    return false;
  }
};

export const storeMediaRow = z.object({
  id: z.number(),
  store_template_id: z.number(),
  media_type: z.enum(["logo", "image", "video"]),
  title: z.string().nullable(),
  storage_key: z.string().nullable(),
  content_type: z.string().nullable(),
  sha256: z.string().nullable(),
  video_url: z.string().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  status: z.enum(storeStatuses),
  /** Null once the seller closed their account. */
  seller_id: z.number().nullable(),
});
export type StoreMediaRow = z.infer<typeof storeMediaRow>;

const columns = sql.fragment`m.id, m.store_template_id, m.media_type, m.title, m.storage_key, m.content_type, m.sha256, m.video_url, m.width, m.height, st.status, st.seller_id`;

/** One media row with its template's status and seller. */
export async function findStoreMedia(conn: CommonQueryMethods, id: number): Promise<StoreMediaRow | null> {
  return conn.maybeOne(sql.type(storeMediaRow)`
    select ${columns} from store_template_media m join store_templates st on st.id = m.store_template_id where m.id = ${id}`);
}

/** What a new media row records. */
export type NewStoreMedia = { storeTemplateId: number; title: string | null } & (
  | { mediaType: "logo" | "image"; storageKey: string; contentType: string; byteSize: number; width: number; height: number; sha256: string }
  | { mediaType: "video"; videoUrl: string }
);

/** Inserts a media row (a new logo replaces the old one); returns its id. @returns null when the template is full */
export async function insertStoreMedia(tx: CommonQueryMethods, media: NewStoreMedia): Promise<number | null> {
  // One upload of a template at a time, so the count below sees the one before (two uploads
  // into the last free place both counted 19 and both were stored).
  await lockStoreTemplate(tx, media.storeTemplateId);
  if (media.mediaType === "logo") {
    await tx.query(sql.type(z.object({}))`delete from store_template_media where store_template_id = ${media.storeTemplateId} and media_type = 'logo'`);
  }
  const count = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from store_template_media where store_template_id = ${media.storeTemplateId}`);
  if (count >= MAX_STORE_MEDIA) return null;
  const image = media.mediaType === "video" ? null : media;
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into store_template_media (store_template_id, media_type, title, storage_key, content_type, byte_size, width, height, sha256, video_url)
    values (${media.storeTemplateId}, ${media.mediaType}, ${media.title}, ${image?.storageKey ?? null}, ${image?.contentType ?? null},
      ${image?.byteSize ?? null}, ${image?.width ?? null}, ${image?.height ?? null}, ${image?.sha256 ?? null},
      ${media.mediaType === "video" ? media.videoUrl : null})
    returning id`);
}

/** Deletes a media row. */
export async function deleteStoreMedia(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(z.object({}))`delete from store_template_media where id = ${id}`);
}
