-- Daily histograms of timing measures (shared/usage/histogram.ts): GET /admin/performance-metrics
-- reads its percentiles from one row per day, metric, route and device class instead of sorting
-- every raw measure (a week of a busy site is millions of rows). Web processes add what they
-- accept to these rows in batches; the raw rows stay, and performance_histograms_rebuild
-- recomputes the rows of a day range from them (this migration's backfill, and measures
-- loaded by other means than the API).

create table performance_histograms (
  device_class text not null check (device_class in ('mobile', 'tablet', 'desktop', 'server', '*')),
  day date not null,
  name text not null,
  route text not null,
  total bigint not null check (total > 0),
  buckets integer[] not null,
  counts bigint[] not null,
  min_values double precision[] not null,
  max_values double precision[] not null,
  primary key (device_class, day, name, route),
  check (cardinality(counts) = cardinality(buckets) and cardinality(min_values) = cardinality(buckets)
    and cardinality(max_values) = cardinality(buckets))
);
comment on table performance_histograms is
  'Per UTC day, device class (''*'' = all classes), metric and route: how many measures, and the occupied buckets of 5 % width (bucket = floor(ln(value) / ln(1.05)), -1000 below 1e-6) in ascending order, with how many measures fell in each and the smallest and largest of them.';

create function performance_bucket(value double precision) returns integer
language sql immutable parallel safe as $$
  select case when value < 1e-6 then -1000 else floor(ln(value) / ln(1.05))::integer end
$$;
comment on function performance_bucket is 'The histogram bucket of a measure (shared/usage/histogram.ts bucketOf).';

create function performance_histogram_merge(
  b1 integer[], c1 bigint[], n1 double precision[], x1 double precision[],
  b2 integer[], c2 bigint[], n2 double precision[], x2 double precision[],
  out buckets integer[], out counts bigint[], out min_values double precision[], out max_values double precision[])
language sql immutable parallel safe as $$
  select array_agg(bucket order by bucket), array_agg(n order by bucket), array_agg(lo order by bucket), array_agg(hi order by bucket)
  from (
    select bucket, sum(count)::bigint as n, min(lo) as lo, max(hi) as hi
    from (select * from unnest(b1, c1, n1, x1) union all select * from unnest(b2, c2, n2, x2)) as cells (bucket, count, lo, hi)
    group by bucket
  ) as merged
$$;
comment on function performance_histogram_merge is 'Adds two histograms of the same day, device class, metric and route bucket by bucket.';

create function performance_histograms_rebuild(from_day date, to_day date) returns void
language sql as $$
  delete from performance_histograms where day >= from_day and day < to_day;
  insert into performance_histograms (device_class, day, name, route, total, buckets, counts, min_values, max_values)
  select device_class, day, name, route, sum(n), array_agg(bucket order by bucket), array_agg(n order by bucket),
    array_agg(lo order by bucket), array_agg(hi order by bucket)
  from (
    select d.device_class, (recorded_at at time zone 'UTC')::date as day, name, route, performance_bucket(value) as bucket,
      count(*) as n, min(value) as lo, max(value) as hi
    from performance_measures m
    cross join lateral (values (m.device_class), ('*')) as d (device_class)
    where recorded_at >= from_day::timestamp at time zone 'UTC' and recorded_at < to_day::timestamp at time zone 'UTC'
    group by 1, 2, 3, 4, 5
  ) as cells
  group by 1, 2, 3, 4;
$$;
comment on function performance_histograms_rebuild is
  'Recomputes the histograms of the days [from_day, to_day) from the raw measures.';

select performance_histograms_rebuild(coalesce((select min(recorded_at at time zone 'UTC')::date from performance_measures), current_date), 'infinity');
