/**
 * Browsing and searching the store (GET /store/templates): published templates filtered by
 * category, language and price, found by `q` through full-text search (name weighted above
 * description); ranked by relevance when `q` is given, unless another sort is asked for.
 *
 * Typos are corrected through a dictionary of the published templates' words (`store_search_words`,
 * kept by triggers, trigram-indexed; drafts feed it nothing): each word of `q` it does not hold stands for itself or any of the
 * dictionary words most similar to it, so "crm dashbord" searches `crm & (dashbord | dashboard)` on the
 * full-text index. The cost follows the few hundred rows that match, not the catalogue size.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
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
 * Trigram similarity from which a dictionary word stands in for a word of `q` (pg_trgm's
 * default threshold; "invoce" and "invoice" score 0.5, "kanbn" and "kanban" 0.44).
 */
export const WORD_SIMILARITY = 0.3;

/** Most dictionary words one word of `q` may stand for (the nearest ones). */
export const WORD_CANDIDATES = 8;

/**
 * The typo-tolerant tsquery of `q` (a scalar subquery, evaluated once per statement): every
 * word of `q` must occur, or, for a word the dictionary does not hold, one of the dictionary
 * words nearest to it. A known word is not widened: "generator" would otherwise also stand for
 * "generated", which may be in every description. Null when `q` has no words.
 */
export const fuzzyQuery = (q: string) => sql.fragment`(
  select tsquery_and_agg(alternatives) from (
    select tsquery_or_agg(plainto_tsquery('simple', w.word)) as alternatives
    from unnest(tsvector_to_array(to_tsvector('simple', ${q}::text))) as term
    cross join lateral (
      select term as word
      union
      select near.word
      from (select s.word from store_search_words s order by s.word <-> term limit ${WORD_CANDIDATES}) near
      where similarity(near.word, term) >= ${WORD_SIMILARITY}
        and not exists (select from store_search_words known where known.word = term)
    ) w
    group by term
  ) per_term)`;

/** One page of published store templates for `viewerId`, and the total. */
export async function searchStore(conn: CommonQueryMethods, input: SearchInput, viewerId: number | null): Promise<{ rows: StoreTemplateRow[]; total: number }> {
  const where = [sql.fragment`st.status = 'published'`];
  if (input.category) where.push(sql.fragment`st.category = ${input.category}`);
  if (input.language) where.push(sql.fragment`lower(st.language) = lower(${input.language})`);
  if (input.price_min !== undefined) where.push(sql.fragment`${priceValue} >= ${input.price_min}`);
  if (input.price_max !== undefined) where.push(sql.fragment`${priceValue} <= ${input.price_max}`);
  const q = input.q?.trim() || null;
  // The search terms are computed once per statement (a materialised CTE read by InitPlans).
  const terms = q
    ? sql.fragment`with terms as materialized (select websearch_to_tsquery('simple', ${q}) as exact, ${fuzzyQuery(q)} as fuzzy)`
    : sql.fragment``;
  if (q) where.push(sql.fragment`(st.search_vector @@ (select exact from terms) or st.search_vector @@ (select fuzzy from terms))`);
  // Name matches weigh more than description matches (the vector's weights), a shorter
  // document more than a longer one (normalisation 1), and the words as written add to
  // the words as corrected.
  const relevance = q
    ? sql.fragment`coalesce(ts_rank(st.search_vector, (select fuzzy from terms), 1), 0) + ts_rank(st.search_vector, (select exact from terms), 1)`
    : sql.fragment`0`;
  const sorts = {
    sales_count: sql.fragment`st.sales_count desc`,
    rating: sql.fragment`st.review_score desc nulls last, st.review_count desc`,
    newest: sql.fragment`st.published_at desc`,
  };
  const order = input.sort ? sql.fragment`${sorts[input.sort]}, relevance desc` : q ? sql.fragment`relevance desc` : sorts.newest;
  // The page is chosen on the bare rows first (a top-N sort, not a sort of every match); the
  // presented columns (media, the caller's purchase, the version) are read for its rows only.
  const rows = await conn.any(sql.type(storeTemplateRow.extend({ total: z.number() }))`
    ${terms}${q ? sql.fragment`,` : sql.fragment`with`} hits as (
      select page.id, page.total, row_number() over () as ord from (
        select st.id, count(*) over ()::int as total
        from (select st.*, (${relevance})::float8 as relevance from store_templates st where ${sql.join(where, sql.fragment` and `)}) st
        order by ${order}, st.id desc
        limit ${input.rows} offset ${(input.page - 1) * input.rows}
      ) page
    )
    select ${storeTemplateColumns(viewerId)}, hits.total
    from hits join store_templates st on st.id = hits.id join users u on u.id = st.seller_id
    order by hits.ord`);
  let total = rows[0]?.total ?? 0;
  if (!rows.length && input.page > 1) {
    total = await conn.oneFirst(sql.type(z.object({ n: z.number() }))`
      ${terms} select count(*)::int as n from store_templates st where ${sql.join(where, sql.fragment` and `)}`);
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
