/**
 * Factories for the template store: sellers with a complete profile, published store
 * templates (rows written directly, with a frozen version), purchases and earnings.
 */
import { z } from "zod";
import { seal } from "../../shared/crypto.ts";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import type { InsertUserInput } from "../../shared/db/users.ts";
import { setStatus } from "../../shared/store/catalog.ts";
import { insertVersion, snapshotTemplates } from "../../shared/store/versions.ts";
import type { TestApp } from "./app.ts";
import { buildUserWithToken } from "./factories.ts";

export const VALID_IBAN = "DE89370400440532013000";

/** A user with a complete seller profile, and a token. */
export async function buildSeller(app: Pick<TestApp, "pool" | "config">, overrides: Partial<InsertUserInput> = {}) {
  const seller = await buildUserWithToken(app.pool, overrides);
  await app.pool.query(sql.type(z.object({}))`
    update users set is_seller = true, payout_method = 'bank_transfer', bank_account_holder = 'Seller GmbH',
      bank_iban = ${sql.binary(seal(app.config.appKey, VALID_IBAN))} where id = ${seller.user.id}`);
  return seller;
}

export interface StoreTemplateOverrides {
  name?: string;
  description?: string;
  category?: string;
  language?: string;
  price_type?: "credits" | "euros" | "free";
  price_credits?: number;
  price_euro_cents?: number;
  sales_count?: number;
  review_score?: number | null;
  published_at?: Date;
}

/** A published store template of `sellerId` packaging `templateIds` (frozen as version 1); returns its id. */
export async function buildStoreTemplate(pool: DatabasePool, sellerId: number, templateIds: number[], o: StoreTemplateOverrides = {}): Promise<number> {
  return pool.transaction(async (tx) => {
    const priceType = o.price_type ?? "free";
    const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into store_templates (seller_id, name, description, category, language, price_type, price_credits, price_euro_cents,
        sales_count, review_score, review_count)
      values (${sellerId}, ${o.name ?? "Starter kit"}, ${o.description ?? ""}, ${o.category ?? "Utilities"}, ${o.language ?? "TypeScript"},
        ${priceType}, ${priceType === "credits" ? (o.price_credits ?? 100) : 0}, ${priceType === "euros" ? (o.price_euro_cents ?? 999) : 0},
        ${o.sales_count ?? 0}, ${o.review_score ?? null}, ${o.review_score ? 1 : 0})
      returning id`);
    for (const [position, templateId] of templateIds.entries()) {
      await tx.query(sql.type(z.object({}))`
        insert into store_template_sources (store_template_id, template_id, position) values (${id}, ${templateId}, ${position})`);
    }
    const version = await insertVersion(tx, id, await snapshotTemplates(tx, templateIds));
    await setStatus(tx, id, "published", version.id);
    if (o.published_at) await tx.query(sql.type(z.object({}))`update store_templates set published_at = ${o.published_at.toISOString()} where id = ${id}`);
    return id;
  });
}

/** One catalogue row for `seedCatalogue`. */
export interface CatalogueEntry {
  name: string;
  description: string;
  category: string;
  language: string;
  price_type: "credits" | "euros" | "free";
  price: number;
  sales_count: number;
  review_score: number | null;
  published_at: Date;
}

/** Inserts many published store templates of `sellerId` in one statement (no versions: for browsing only). */
export async function seedCatalogue(pool: DatabasePool, sellerId: number, entries: CatalogueEntry[]): Promise<number[]> {
  const column = <K extends keyof CatalogueEntry>(key: K) => entries.map((e) => e[key]);
  const ids = await pool.anyFirst(sql.type(z.object({ id: z.number() }))`
    insert into store_templates (seller_id, name, description, category, language, price_type, price_credits, price_euro_cents,
      sales_count, review_score, review_count, status, published_at)
    select ${sellerId}, e.name, e.description, e.category, e.language, e.price_type,
      case when e.price_type = 'credits' then e.price::int else 0 end,
      case when e.price_type = 'euros' then (e.price * 100)::int else 0 end,
      e.sales_count, e.review_score, case when e.review_score is null then 0 else 3 end, 'published', e.published_at
    from unnest(${sql.array(column("name"), "text")}, ${sql.array(column("description"), "text")}, ${sql.array(column("category"), "text")},
      ${sql.array(column("language"), "text")}, ${sql.array(column("price_type"), "text")}, ${sql.array(column("price"), "numeric")},
      ${sql.array(column("sales_count"), "int4")}, ${sql.array(column("review_score") as unknown as number[], "numeric")},
      ${sql.array(column("published_at").map((d) => d.toISOString()), "timestamptz")})
      as e(name, description, category, language, price_type, price, sales_count, review_score, published_at)
    returning id`);
  return [...ids];
}
