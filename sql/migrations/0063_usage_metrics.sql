-- Usage metrics (issue 19): client timing measures (web vitals) and the server's own request
-- timings, read as percentiles per metric, route and day; and page views counted without
-- identifying anyone: no IP address or user agent is stored, a visitor is a keyed hash of
-- them under a salt that exists for one UTC day only, and raw views older than
-- VISITS_RETENTION_DAYS are rolled up into daily figures and deleted.

create table performance_measures (
  recorded_at timestamptz not null default now(),
  name text not null check (name in ('LCP', 'INP', 'CLS', 'TTFB', 'FCP', 'FID', 'server')),
  value double precision not null check (value >= 0 and value <= 3600000),
  route text not null check (char_length(route) between 1 and 200),
  device_class text not null check (device_class in ('mobile', 'tablet', 'desktop', 'server'))
);
comment on table performance_measures is
  'Append-only timing measures: client web vitals (POST /performance-metrics) and sampled server request durations (name server).';
-- Append-only in time order: a BRIN index finds a day's rows at almost no write cost.
create index performance_measures_recorded_at_idx on performance_measures using brin (recorded_at);

create table visit_salts (
  day date primary key,
  salt bytea not null
);
comment on table visit_salts is 'The salt of each UTC day''s visitor hashes; deleted once its day is over, so old hashes cannot be recomputed.';

create table page_views (
  day date not null,
  visitor bytea not null check (length(visitor) = 16),
  path text not null check (char_length(path) between 1 and 500),
  referrer_host text check (char_length(referrer_host) <= 255),
  created_at timestamptz not null default now()
);
create index page_views_day_idx on page_views (day);
comment on column page_views.visitor is 'HMAC-SHA-256 (truncated) of address and user agent under the day''s salt; the inputs are never stored.';
comment on column page_views.referrer_host is 'Only the host of the referrer (no path or query), and none for the site itself.';

create table visit_days (
  day date primary key,
  visitors integer not null,
  views integer not null
);
create table visit_day_paths (
  day date not null,
  path text not null,
  visitors integer not null,
  views integer not null,
  primary key (day, path)
);
create table visit_day_referrers (
  day date not null,
  referrer_host text not null,
  views integer not null,
  primary key (day, referrer_host)
);
comment on table visit_days is 'Rolled-up page views of days whose raw rows are gone (visits__rollup).';
