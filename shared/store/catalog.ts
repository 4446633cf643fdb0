/**
 * Store templates in the database (spec "Template store resources").
 *
 * Glossary: a *store template* packages one or more of a seller's templates (its *sources*);
 * a *version* is their content frozen at a publish, and what buyers receive; *status* is
 * `draft`, `published`, `review` (a publish held by the plagiarism check) or `withdrawn`
 * (deleted after sales: hidden from the store, buyers keep access).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

/** The spec's ten browsable categories. */
export const storeCategories = [
  "Web Applications",
  "Mobile Apps",
  "APIs",
  "Utilities",
  "Admin Panels",
  "E-commerce",
  "CRM Systems",
  "Reporting Tools",
  "Content Management",
  "Database Schemas",
] as const;
export const priceTypes = ["credits", "euros", "free"] as const;
export const storeStatuses = ["draft", "published", "review", "withdrawn"] as const;
export type StoreStatus = (typeof storeStatuses)[number];

const mediaItem = z.object({
  id: z.number(),
  media_type: z.enum(["logo", "image", "video"]),
  title: z.string().nullable(),
  sha256: z.string().nullable(),
  video_url: z.string().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
});
export type StoreMediaItem = z.infer<typeof mediaItem>;

export const storeTemplateRow = z.object({
  id: z.number(),
  /** Null once the seller closed their account (their sold templates stay, withdrawn; 0122). */
  seller_id: z.number().nullable(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  language: z.string(),
  price_type: z.enum(priceTypes),
  price_credits: z.number(),
  price_euro_cents: z.number(),
  status: z.enum(storeStatuses),
  current_version_id: z.number().nullable(),
  sales_count: z.number(),
  review_count: z.number(),
  review_score: z.coerce.number().nullable(),
  published_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  seller_username: z.string().nullable(),
  seller_name: z.string().nullable(),
  media: z.array(mediaItem),
  is_purchased: z.boolean(),
  version: z.number().nullable(),
});
export type StoreTemplateRow = z.infer<typeof storeTemplateRow>;

/** Columns of `storeTemplateRow` over `st` (store_templates) and `u` (its seller, left-joined); `viewerId` sets is_purchased. */
export const storeTemplateColumns = (viewerId: number | null) => sql.fragment`
  st.id, st.seller_id, st.name, st.description, st.category, st.language, st.price_type, st.price_credits,
  st.price_euro_cents, st.status, st.current_version_id, st.sales_count, st.review_count, st.review_score,
  st.published_at, st.created_at, st.updated_at, u.username as seller_username, u.name as seller_name,
  coalesce((select json_agg(json_build_object('id', m.id, 'media_type', m.media_type, 'title', m.title, 'sha256', m.sha256,
      'video_url', m.video_url, 'width', m.width, 'height', m.height) order by m.media_type = 'logo' desc, m.id)
    from store_template_media m where m.store_template_id = st.id), '[]') as media,
  exists (select 1 from store_purchases p where p.store_template_id = st.id and p.buyer_id = ${viewerId ?? 0}
    and p.status = 'completed') as is_purchased,
  (select v.version from store_template_versions v where v.id = st.current_version_id) as version`;

/**
 * One store template as `viewerId` sees it (any status; the caller decides visibility), also
 * one whose seller closed their account (an inner join of the seller hid those even from
 * administrators).
 */
export async function findStoreTemplate(conn: CommonQueryMethods, id: number, viewerId: number | null): Promise<StoreTemplateRow | null> {
  return conn.maybeOne(sql.type(storeTemplateRow)`
    select ${storeTemplateColumns(viewerId)} from store_templates st left join users u on u.id = st.seller_id where st.id = ${id}`);
}

/** Locks a store template row; null when it does not exist. */
export async function lockStoreTemplate(conn: CommonQueryMethods, id: number) {
  return conn.maybeOne(sql.type(z.object({ id: z.number(), seller_id: z.number().nullable(), status: z.enum(storeStatuses), sales_count: z.number() }))`
    select id, seller_id, status, sales_count from store_templates where id = ${id} for update`);
}

/** Writable fields of a store template (prices already in their stored units). */
export interface StoreTemplateFields {
  name: string;
  description: string;
  category: string;
  language: string;
  price_type: (typeof priceTypes)[number];
  price_credits: number;
  price_euro_cents: number;
}

/** Inserts a draft store template packaging `templateIds`; returns its id. */
export async function insertStoreTemplate(tx: CommonQueryMethods, sellerId: number, fields: StoreTemplateFields, templateIds: number[]): Promise<number> {
  const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into store_templates (seller_id, name, description, category, language, price_type, price_credits, price_euro_cents)
    values (${sellerId}, ${fields.name}, ${fields.description}, ${fields.category}, ${fields.language}, ${fields.price_type},
      ${fields.price_credits}, ${fields.price_euro_cents})
    returning id`);
  await replaceSources(tx, id, templateIds);
  return id;
}

/** Updates the given fields of a store template. */
export async function updateStoreTemplate(tx: CommonQueryMethods, id: number, fields: Partial<StoreTemplateFields>): Promise<void> {
  const sets = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
  sets.push(sql.fragment`updated_at = now()`);
  await tx.query(sql.type(z.object({}))`update store_templates set ${sql.join(sets, sql.fragment`, `)} where id = ${id}`);
}

/** Replaces the templates a store template packages. */
export async function replaceSources(tx: CommonQueryMethods, id: number, templateIds: number[]): Promise<void> {
  await tx.query(sql.type(z.object({}))`delete from store_template_sources where store_template_id = ${id}`);
  for (const [position, templateId] of templateIds.entries()) {
    await tx.query(sql.type(z.object({}))`
      insert into store_template_sources (store_template_id, template_id, position) values (${id}, ${templateId}, ${position})`);
  }
}

/** The ids among `templateIds` that are not the seller's own (a project they own, or their top level). */
export async function foreignTemplates(conn: CommonQueryMethods, sellerId: number, templateIds: number[]): Promise<number[]> {
  const own = await conn.anyFirst(sql.type(z.object({ id: z.number() }))`
    select t.id from templates t left join projects p on p.id = t.project_id
    where t.id = any(${sql.array(templateIds, "int8")})
      and (t.owner_id = ${sellerId} or (p.owner_id = ${sellerId} and p.deleted_at is null))`);
  return templateIds.filter((id) => !own.includes(id));
}

/** The source template ids of a store template in package order. */
export async function listSources(conn: CommonQueryMethods, id: number): Promise<number[]> {
  return [...(await conn.anyFirst(sql.type(z.object({ template_id: z.number() }))`
    select template_id from store_template_sources where store_template_id = ${id} order by position`))];
}

/** Sets the status (and the current version, when given). */
export async function setStatus(tx: CommonQueryMethods, id: number, status: StoreStatus, versionId?: number): Promise<void> {
  await tx.query(sql.type(z.object({}))`
    update store_templates set status = ${status}, updated_at = now(),
      current_version_id = coalesce(${versionId ?? null}::bigint, current_version_id),
      published_at = case when ${status} = 'published' then coalesce(published_at, now()) else published_at end
    where id = ${id}`);
}

/** Deletes a store template without sales (its media rows leave their files to the media sweep). */
export async function deleteStoreTemplate(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(z.object({}))`delete from store_templates where id = ${id}`);
}
