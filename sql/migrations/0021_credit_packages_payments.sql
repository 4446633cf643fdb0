-- Credit packages sold for money, the payment transactions that buy them (card processor or
-- wallet provider), and the providers' webhook events, each stored once.

create table credit_packages (
  id bigint generated always as identity primary key,
  name text not null check (char_length(name) between 1 and 100),
  credits integer not null check (credits > 0),
  price_cents integer not null check (price_cents > 0),
  currency text not null default 'EUR' check (currency ~ '^[A-Z]{3}$'),
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
insert into credit_packages (name, credits, price_cents) values
  ('Starter', 100, 500),
  ('Standard', 550, 2500),
  ('Professional', 1200, 5000),
  ('Studio', 2600, 10000);
comment on table credit_packages is 'Credits for sale; an inactive package is kept for its past purchases and hidden from the public list.';

create table credit_transactions (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  kind text not null default 'credit_package' check (kind in ('credit_package', 'subscription', 'patron')),
  package_id bigint references credit_packages (id) on delete restrict,
  -- What a subscription or patron payment buys (plans.id or the patron level), as set at creation.
  item_id bigint,
  project_id bigint references projects (id) on delete set null,
  payment_method text not null check (payment_method in ('cardprocessor', 'walletprovider')),
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'refunded')),
  credits integer not null check (credits >= 0),
  amount_cents integer not null check (amount_cents > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  provider_payment_id text,
  provider_order_id text,
  provider_capture_id text,
  refund_shortfall integer not null default 0 check (refund_shortfall >= 0),
  failure_reason text check (char_length(failure_reason) <= 1000),
  succeeded_at timestamptz,
  refunded_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index credit_transactions_user_id_idx on credit_transactions (user_id, id desc);
create unique index credit_transactions_provider_payment_id_key on credit_transactions (provider_payment_id) where provider_payment_id is not null;
create unique index credit_transactions_provider_order_id_key on credit_transactions (provider_order_id) where provider_order_id is not null;
create index credit_transactions_status_day_idx on credit_transactions (status, succeeded_at);
comment on table credit_transactions is
  'A payment through a provider: pending until its webhook says succeeded or failed; refunded reverses its credits (refund_shortfall: credits already spent when the refund came).';

create table payment_events (
  id bigint generated always as identity primary key,
  provider text not null check (provider in ('cardprocessor', 'walletprovider')),
  event_id text not null check (char_length(event_id) between 1 and 255),
  event_type text not null check (char_length(event_type) between 1 and 255),
  payload jsonb not null,
  status text not null default 'received' check (status in ('received', 'processed', 'ignored', 'failed')),
  error text,
  received_at timestamptz not null default now(),
  processed_at timestamptz,
  unique (provider, event_id)
);
comment on table payment_events is
  'Inbound payment webhooks, one row per provider event id: a redelivery finds the row and changes nothing; the job that applies the event marks it processed in the same transaction as its effect.';
