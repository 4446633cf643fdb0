/**
 * SQL of page views. A view is stored with its UTC day, the visitor's daily hash, the path
 * and the referrer's host; nothing else about the request. Days past retention live on
 * only as rolled-up figures (visit_days, visit_day_paths, visit_day_referrers).
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabaseTransactionConnection } from "../db/pool.ts";

/** The salt of `day` (YYYY-MM-DD), made by whichever process needs it first. */
export async function saltOf(conn: CommonQueryMethods, day: string): Promise<Buffer> {
  await conn.query(sql.type(ignoredRow)`insert into visit_salts (day, salt) values (${day}::date, ${sql.binary(randomBytes(32))}) on conflict (day) do nothing`);
  return conn.oneFirst(sql.type(z.object({ salt: z.instanceof(Buffer) }))`select salt from visit_salts where day = ${day}::date`);
}

export async function insertPageView(conn: CommonQueryMethods, view: { day: string; visitor: Buffer; path: string; referrerHost: string | null }): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into page_views (day, visitor, path, referrer_host) values (${view.day}::date, ${sql.binary(view.visitor)}, ${view.path}, ${view.referrerHost})`);
}

/**
 * Rolls raw views of days before `cutoff` (YYYY-MM-DD) into the daily tables and deletes
 * them, and deletes the salts of days before `today`; one transaction, so a crash rolls
 * back both halves. Returns how many raw rows were rolled up.
 */
export async function rollUpVisits(tx: DatabaseTransactionConnection, cutoff: string, today: string): Promise<number> {
  const old = sql.fragment`day < ${cutoff}::date`;
  await tx.query(sql.type(ignoredRow)`
    insert into visit_days (day, visitors, views)
    select day, count(distinct visitor)::int, count(*)::int from page_views where ${old} group by day
    on conflict (day) do update set visitors = visit_days.visitors + excluded.visitors, views = visit_days.views + excluded.views`);
  await tx.query(sql.type(ignoredRow)`
    insert into visit_day_paths (day, path, visitors, views)
    select day, path, count(distinct visitor)::int, count(*)::int from page_views where ${old} group by day, path
    on conflict (day, path) do update set visitors = visit_day_paths.visitors + excluded.visitors, views = visit_day_paths.views + excluded.views`);
  await tx.query(sql.type(ignoredRow)`
    insert into visit_day_referrers (day, referrer_host, views)
    select day, referrer_host, count(*)::int from page_views where ${old} and referrer_host is not null group by day, referrer_host
    on conflict (day, referrer_host) do update set views = visit_day_referrers.views + excluded.views`);
  const deleted = await tx.any(sql.type(z.object({ day: z.unknown() }))`delete from page_views where ${old} returning day`);
  await tx.query(sql.type(ignoredRow)`delete from visit_salts where day < ${today}::date`);
  return deleted.length;
}

const dayRow = z.object({ day: z.string(), visitors: z.number(), views: z.number() });
const pathRow = z.object({ day: z.string(), path: z.string(), visitors: z.number(), views: z.number() });
const referrerRow = z.object({ day: z.string(), referrer_host: z.string(), views: z.number() });

/** Per day in [from, to] (YYYY-MM-DD): visitors and views, and the `top` paths and referrers, from rolled-up and raw rows alike. */
export async function visitReport(conn: CommonQueryMethods, from: string, to: string, top: number) {
  const range = sql.fragment`day between ${from}::date and ${to}::date`;
  const [days, paths, referrers] = await Promise.all([
    conn.any(sql.type(dayRow)`
      select to_char(day, 'YYYY-MM-DD') as day, sum(visitors)::int as visitors, sum(views)::int as views from (
        select day, visitors, views from visit_days where ${range}
        union all select day, count(distinct visitor)::int, count(*)::int from page_views where ${range} group by day
      ) x group by day order by day desc`),
    conn.any(sql.type(pathRow)`
      select to_char(day, 'YYYY-MM-DD') as day, path, visitors, views from (
        select day, path, sum(visitors)::int as visitors, sum(views)::int as views,
          row_number() over (partition by day order by sum(views) desc, path) as rank
        from (
          select day, path, visitors, views from visit_day_paths where ${range}
          union all select day, path, count(distinct visitor)::int, count(*)::int from page_views where ${range} group by day, path
        ) x group by day, path
      ) ranked where rank <= ${top} order by day desc, views desc, path`),
    conn.any(sql.type(referrerRow)`
      select to_char(day, 'YYYY-MM-DD') as day, referrer_host, views from (
        select day, referrer_host, sum(views)::int as views, row_number() over (partition by day order by sum(views) desc, referrer_host) as rank
        from (
          select day, referrer_host, views from visit_day_referrers where ${range}
          union all select day, referrer_host, count(*)::int from page_views where ${range} and referrer_host is not null group by day, referrer_host
        ) x group by day, referrer_host
      ) ranked where rank <= ${top} order by day desc, views desc, referrer_host`),
  ]);
  return { days: [...days], paths: [...paths], referrers: [...referrers] };
}
