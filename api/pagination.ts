/**
 * Pagination (spec "Limits"): `page` (default 1) and `per_page` (default 15, max 100) in,
 * `{data, links: {first, last, next, prev}, meta: {current_page, total, per_page, last_page, from, to}}` out.
 */
import { z } from "zod";
import { sql } from "../shared/db/pool.ts";
import { wholeNumber } from "../shared/canonicalNumbers.ts";

export const paginationQuery = z.object({
  page: wholeNumber({ min: 1, max: 100_000, default: 1 }),
  per_page: wholeNumber({ min: 1, max: 100, default: 15 }),
});
export type PaginationQuery = z.infer<typeof paginationQuery>;

/** LIMIT/OFFSET fragment for a page. */
export const pageFragment = (q: PaginationQuery) => sql.fragment`limit ${q.per_page} offset ${(q.page - 1) * q.per_page}`;

/** Wraps one page of presented rows into the paginated body. `url` is the request URL (path and query). */
export function paginated<T>(data: T[], total: number, q: PaginationQuery, url: URL) {
  const lastPage = Math.max(1, Math.ceil(total / q.per_page));
  const link = (page: number) => {
    const next = new URL(url);
    next.searchParams.set("page", String(page));
    next.searchParams.set("per_page", String(q.per_page));
    return `${next.pathname}${next.search}`;
  };
  const from = total === 0 || data.length === 0 ? null : (q.page - 1) * q.per_page + 1;
  return {
    data,
    links: {
      first: link(1),
      last: link(lastPage),
      prev: q.page > 1 ? link(Math.min(q.page - 1, lastPage)) : null,
      next: q.page < lastPage ? link(q.page + 1) : null,
    },
    meta: {
      current_page: q.page,
      per_page: q.per_page,
      total,
      last_page: lastPage,
      from,
      to: from === null ? null : from + data.length - 1,
    },
  };
}

/** Response schema of a paginated list of `item`. */
export function paginatedSchema<T extends z.ZodType>(item: T) {
  const link = z.string().nullable();
  return z.object({
    data: z.array(item),
    links: z.object({ first: z.string(), last: z.string(), prev: link, next: link }),
    meta: z.object({
      current_page: z.number().int(),
      per_page: z.number().int(),
      total: z.number().int(),
      last_page: z.number().int(),
      from: z.number().int().nullable(),
      to: z.number().int().nullable(),
    }),
  });
}
