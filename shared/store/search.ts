/**
 * Browsing and searching the store (GET /store/templates): published templates filtered by
 * category, language and price, found by `q` through full-text search (name weighted above
 * description) or, for typos, by pg_trgm word similarity with the name; ranked by relevance
 * when `q` is given, unless another sort is asked for.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { storeTemplateColumns, storeTemplateRow, type StoreTemplateRow } from "./catalog.ts";

export interface SearchInput {
  q?: string | undefined;
  category?: string | undefined;
  language?: string | undefined;
  /** In the template's own unit: credits for credit prices, euros for euro prices; free is 0. */
  price_min?: number | undefined;
  price_max?: number | undefined;
  sort?: "sales_count" | "rating" | "newest" | undefined;
  page: number;
  rows: number;
}

const priceValue = sql.fragment`(case st.price_type when 'credits' then st.price_credits::numeric when 'euros' then st.price_euro_cents / 100.0 else 0 end)`;

/**
 * Word similarity from which a name matches `q` (pg_trgm's default is 0.6; one transposed
 * pair of letters in a nine-letter word scores 0.56).
 */
export const WORD_SIMILARITY = 0.5;

/** One page of published store templates for `viewerId`, and the total. */
export async function searchStore(pool: DatabasePool, input: SearchInput, viewerId: number | null): Promise<{ rows: StoreTemplateRow[]; total: number }> {
  if (!input.q?.trim()) return searchPage(pool, input, viewerId);
  // The threshold is set for this transaction only; pooled connections keep no session state.
  return pool.transaction(async (tx) => {
    await tx.query(sql.type(z.object({}))`select set_config('pg_trgm.word_similarity_threshold', ${String(WORD_SIMILARITY)}, true)`);
    return searchPage(tx, input, viewerId);
  });
}

async function searchPage(conn: CommonQueryMethods, input: SearchInput, viewerId: number | null): Promise<{ rows: StoreTemplateRow[]; total: number }> {
  const where = [sql.fragment`st.status = 'published'`];
  if (input.category) where.push(sql.fragment`st.category = ${input.category}`);
  if (input.language) where.push(sql.fragment`lower(st.language) = lower(${input.language})`);
  if (input.price_min !== undefined) where.push(sql.fragment`${priceValue} >= ${input.price_min}`);
  if (input.price_max !== undefined) where.push(sql.fragment`${priceValue} <= ${input.price_max}`);
  const q = input.q?.trim() || null;
  const query = q ? sql.fragment`websearch_to_tsquery('simple', ${q})` : null;
  if (q && query) where.push(sql.fragment`(st.search_vector @@ ${query} or ${q} <% st.name)`);
  const relevance = q && query ? sql.fragment`ts_rank(st.search_vector, ${query}) + word_similarity(${q}, st.name)` : sql.fragment`0`;
  const sorts = {
    sales_count: sql.fragment`st.sales_count desc`,
    rating: sql.fragment`st.review_score desc nulls last, st.review_count desc`,
    newest: sql.fragment`st.published_at desc`,
  };
  const order = input.sort ? sql.fragment`${sorts[input.sort]}, relevance desc` : q ? sql.fragment`relevance desc` : sorts.newest;
  // The page is chosen on the bare rows first; the presented columns (media, the caller's
  // purchase, the version) are read for its rows only.
  const rows = await conn.any(sql.type(storeTemplateRow.extend({ total: z.number() }))`
    with hits as (
      select st.id, count(*) over ()::int as total, row_number() over (order by ${order}, st.id desc) as ord
      from (select st.*, (${relevance})::float8 as relevance from store_templates st where ${sql.join(where, sql.fragment` and `)}) st
      order by ord
      limit ${input.rows} offset ${(input.page - 1) * input.rows}
    )
    select ${storeTemplateColumns(viewerId)}, hits.total
    from hits join store_templates st on st.id = hits.id join users u on u.id = st.seller_id
    order by hits.ord`);
  let total = rows[0]?.total ?? 0;
  if (!rows.length && input.page > 1) {
    total = await conn.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from store_templates st where ${sql.join(where, sql.fragment` and `)}`);
  }
  return { rows: rows.map(({ total: _t, ...row }) => row), total };
}

/** The ten categories with how many published templates each holds. */
export async function categoryCounts(conn: CommonQueryMethods): Promise<Map<string, number>> {
  const rows = await conn.any(sql.type(z.object({ category: z.string(), count: z.number() }))`
    select category, count(*)::int as count from store_templates where status = 'published' group by category`);
  return new Map(rows.map((row) => [row.category, row.count]));
}

/** The languages of published templates with their counts. */
export async function languageCounts(conn: CommonQueryMethods): Promise<readonly { language: string; count: number }[]> {
  return conn.any(sql.type(z.object({ language: z.string(), count: z.number() }))`
    select min(language) as language, count(*)::int as count from store_templates where status = 'published'
    group by lower(language) order by count(*) desc, min(language)`);
}
