-- Template store: store templates (a seller's package of templates), versions frozen at
-- publish, media, plagiarism checks, purchases, reviews and votes, seller earnings and payouts.

create extension if not exists pg_trgm;

create table store_templates (
  id bigint generated always as identity primary key,
  seller_id bigint not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  category text not null check (category in ('Web Applications', 'Mobile Apps', 'APIs', 'Utilities', 'Admin Panels',
    'E-commerce', 'CRM Systems', 'Reporting Tools', 'Content Management', 'Database Schemas')),
  language text not null check (char_length(language) between 1 and 64),
  price_type text not null check (price_type in ('credits', 'euros', 'free')),
  price_credits integer not null default 0 check (price_credits between 0 and 10000000),
  price_euro_cents integer not null default 0 check (price_euro_cents between 0 and 100000000),
  status text not null default 'draft' check (status in ('draft', 'published', 'review', 'withdrawn')),
  current_version_id bigint,
  sales_count integer not null default 0 check (sales_count >= 0),
  review_count integer not null default 0 check (review_count >= 0),
  review_score numeric(3, 2) check (review_score between 1 and 5),
  search_vector tsvector generated always as (
    setweight(to_tsvector('simple', name), 'A') || setweight(to_tsvector('simple', description), 'B')) stored,
  published_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (price_type <> 'credits' or price_credits > 0),
  check (price_type <> 'euros' or price_euro_cents > 0)
);
create index store_templates_seller_id_idx on store_templates (seller_id, id);
create index store_templates_search_idx on store_templates using gin (search_vector) where status = 'published';
create index store_templates_name_trgm_idx on store_templates using gin (name gin_trgm_ops) where status = 'published';
create index store_templates_listing_idx on store_templates (category, language) where status = 'published';
comment on table store_templates is 'A store template (spec "Template store resources"): a seller''s package of templates, sold as its frozen versions.';
comment on column store_templates.status is 'draft → published; review: a publish held by the plagiarism check for an administrator; withdrawn: deleted after sales (buyers keep access).';
comment on column store_templates.search_vector is 'Full-text document, name weighted above description; typos are matched by trigrams on name.';

create table store_template_sources (
  store_template_id bigint not null references store_templates (id) on delete cascade,
  template_id bigint not null references templates (id) on delete cascade,
  position integer not null,
  primary key (store_template_id, template_id)
);
create index store_template_sources_template_id_idx on store_template_sources (template_id);
comment on table store_template_sources is 'The seller''s templates a store template packages; a publish freezes their content into a version.';

create table store_template_versions (
  id bigint generated always as identity primary key,
  store_template_id bigint not null references store_templates (id) on delete cascade,
  version integer not null check (version > 0),
  content jsonb not null,
  normalized text not null,
  file_hashes text[] not null default '{}',
  created_at timestamptz not null default now(),
  unique (store_template_id, version)
);
create index store_template_versions_normalized_trgm_idx on store_template_versions using gin (normalized gin_trgm_ops);
create index store_template_versions_file_hashes_idx on store_template_versions using gin (file_hashes);
comment on column store_template_versions.content is 'The frozen templates: [{name, description, engine_type, content, variables, files}].';
comment on column store_template_versions.normalized is 'Content with whitespace collapsed and placeholder identifiers renamed in order of appearance, for the plagiarism check.';
comment on column store_template_versions.file_hashes is 'Hex SHA-256 of each normalised file, for the exact-copy check.';

alter table store_templates add constraint store_templates_current_version_id_fkey
  foreign key (current_version_id) references store_template_versions (id) on delete set null;

create table store_plagiarism_checks (
  id bigint generated always as identity primary key,
  store_template_id bigint not null references store_templates (id) on delete cascade,
  version_id bigint references store_template_versions (id) on delete cascade,
  is_duplicate boolean not null,
  similarity_score integer not null check (similarity_score between 0 and 100),
  similar_templates bigint[] not null default '{}',
  checked_by bigint references users (id) on delete set null,
  checked_at timestamptz not null default now()
);
create index store_plagiarism_checks_template_idx on store_plagiarism_checks (store_template_id, id);

create table store_template_media (
  id bigint generated always as identity primary key,
  store_template_id bigint not null references store_templates (id) on delete cascade,
  media_type text not null check (media_type in ('logo', 'image', 'video')),
  title text check (char_length(title) <= 255),
  storage_key text check (char_length(storage_key) between 1 and 1024),
  content_type text check (content_type in ('image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif')),
  byte_size integer check (byte_size >= 0),
  width integer check (width > 0),
  height integer check (height > 0),
  sha256 text check (sha256 ~ '^[0-9a-f]{64}$'),
  video_url text check (char_length(video_url) between 1 and 2048),
  created_at timestamptz not null default now(),
  check ((media_type = 'video') = (video_url is not null)),
  check ((media_type = 'video') = (storage_key is null))
);
create index store_template_media_template_idx on store_template_media (store_template_id, id);
create unique index store_template_media_one_logo_key on store_template_media (store_template_id) where media_type = 'logo';
-- The files of deleted rows go to media_garbage (migration 0070; resolved when the trigger runs),
-- which the media sweep empties.
create function store_template_media_collect_garbage() returns trigger language plpgsql as $$
begin
  if old.storage_key is not null then
    insert into media_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  end if;
  return null;
end
$$;
create trigger store_template_media_collect_garbage after delete on store_template_media
  for each row execute function store_template_media_collect_garbage();

create table store_purchases (
  id bigint generated always as identity primary key,
  buyer_id bigint not null references users (id) on delete cascade,
  store_template_id bigint not null references store_templates (id) on delete restrict,
  version_id bigint not null references store_template_versions (id) on delete restrict,
  payment_type text not null check (payment_type in ('credits', 'euros', 'free')),
  price_credits integer not null default 0 check (price_credits >= 0),
  price_euro_cents integer not null default 0 check (price_euro_cents >= 0),
  status text not null default 'completed' check (status in ('completed', 'refunded')),
  ledger_entry_id bigint,
  refunded_at timestamptz,
  created_at timestamptz not null default now(),
  unique (buyer_id, store_template_id)
);
create index store_purchases_template_idx on store_purchases (store_template_id, created_at);
comment on column store_purchases.version_id is 'The version bought: downloads and installs deliver exactly it.';

create table store_reviews (
  id bigint generated always as identity primary key,
  store_template_id bigint not null references store_templates (id) on delete cascade,
  reviewer_id bigint not null references users (id) on delete cascade,
  rating smallint not null check (rating between 1 and 5),
  comment text not null default '' check (char_length(comment) <= 5000),
  helpful_count integer not null default 0 check (helpful_count >= 0),
  created_at timestamptz not null default now(),
  unique (store_template_id, reviewer_id)
);
create index store_reviews_listing_idx on store_reviews (store_template_id, helpful_count desc, id desc);

create table store_review_votes (
  review_id bigint not null references store_reviews (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (review_id, user_id)
);

create table seller_payouts (
  id bigint generated always as identity primary key,
  seller_id bigint not null references users (id) on delete cascade,
  amount_cents integer not null check (amount_cents > 0),
  status text not null default 'requested' check (status in ('requested', 'processing', 'sent', 'paid', 'failed')),
  transferred_cents integer check (transferred_cents >= 0),
  sepa_storage_key text check (char_length(sepa_storage_key) between 1 and 1024),
  failure text check (char_length(failure) <= 1000),
  processed_at timestamptz,
  paid_at timestamptz,
  created_at timestamptz not null default now()
);
create index seller_payouts_seller_idx on seller_payouts (seller_id, id);
comment on column seller_payouts.status is 'requested → processing (earnings attached by payouts__process) → sent (SEPA file stored) → paid (marked by an administrator); failed when nothing could be attached.';

create table seller_earnings (
  id bigint generated always as identity primary key,
  seller_id bigint not null references users (id) on delete cascade,
  purchase_id bigint not null unique references store_purchases (id) on delete cascade,
  amount_cents integer not null check (amount_cents >= 0),
  amount_credits integer not null default 0 check (amount_credits >= 0),
  status text not null default 'pending' check (status in ('pending', 'paid_out', 'reversed')),
  payout_id bigint references seller_payouts (id) on delete set null,
  created_at timestamptz not null default now()
);
create index seller_earnings_pending_idx on seller_earnings (seller_id, created_at) where status = 'pending';
create index seller_earnings_payout_idx on seller_earnings (payout_id) where payout_id is not null;
comment on table seller_earnings is 'The seller''s share of one purchase: pending until a payout takes it (after the hold), reversed by a refund.';
