/**
 * The Store template resource (spec "Template store resources") as one caller sees it.
 * `can_purchase` says whether the template can be bought at all (published, a price this
 * service can take); `is_purchased` and `is_own` are the caller's.
 */
import type { StoreMediaItem, StoreTemplateRow } from "../../shared/store/catalog.ts";

/** The public address of a stored store image. */
export const storeMediaPath = (item: Pick<StoreMediaItem, "id" | "sha256">) => `/api/store/media/${item.id}?v=${item.sha256!.slice(0, 16)}`;

/** One media item (spec Template media: `file_path` for images and logos, `video_url` for videos; `url` is `file_path` made absolute). */
export const presentStoreMedia = (item: StoreMediaItem, appUrl: string) => ({
  id: item.id,
  media_type: item.media_type,
  title: item.title,
  file_path: item.sha256 ? storeMediaPath(item) : null,
  url: item.sha256 ? `${appUrl}${storeMediaPath(item)}` : null,
  video_url: item.video_url,
  width: item.width,
  height: item.height,
});

/** Euro prices are stored in cents. */
export const euros = (cents: number) => Math.round(cents) / 100;

/** One store template for `viewerId` (null: anonymous), with `version` the number of its current version. */
export function presentStoreTemplate(row: StoreTemplateRow, viewerId: number | null, appUrl: string) {
  const media = row.media.map((item) => presentStoreMedia(item, appUrl));
  const logo = media.find((item) => item.media_type === "logo");
  return {
    id: row.id,
    name: row.name,
    full_name: row.seller_username === null ? row.name : `${row.seller_username}/${row.name}`,
    description: row.description,
    category: row.category,
    language: row.language,
    price_type: row.price_type,
    price_credits: row.price_credits,
    price_euros: euros(row.price_euro_cents),
    sales_count: row.sales_count,
    review_score: row.review_score,
    review_count: row.review_count,
    status: row.status,
    version: row.version,
    // A seller who closed their account leaves no creator (as a purchase then has `seller: null`).
    creator: row.seller_id === null ? null : { id: row.seller_id, username: row.seller_username!, name: row.seller_name! },
    logo: logo?.url ?? null,
    images: media.filter((item) => item.media_type === "image"),
    media: media.filter((item) => item.media_type !== "logo"),
    is_purchased: row.is_purchased,
    is_own: row.seller_id === viewerId,
    can_purchase: row.status === "published" && row.current_version_id !== null,
    created_at: row.created_at.toISOString(),
    published_at: row.published_at?.toISOString() ?? null,
  };
}
