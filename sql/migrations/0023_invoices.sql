-- Invoices: one per succeeded payment, numbered without gaps per year, with its lines and
-- the VAT of the buyer's country (from their profile) where given. Prices include VAT.

create table invoice_counters (
  year integer primary key,
  last_number integer not null check (last_number >= 0)
);
comment on table invoice_counters is 'Last invoice number per year; incremented under its row lock so numbers have no gaps.';

create table invoices (
  id bigint generated always as identity primary key,
  number text not null unique,
  user_id bigint not null references users (id) on delete restrict,
  transaction_id bigint not null unique references credit_transactions (id) on delete restrict,
  issued_at timestamptz not null default now(),
  buyer jsonb not null,
  lines jsonb not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  net_cents integer not null check (net_cents >= 0),
  vat_rate numeric(5, 2) not null check (vat_rate >= 0),
  vat_cents integer not null check (vat_cents >= 0),
  total_cents integer not null check (total_cents >= 0),
  check (net_cents + vat_cents = total_cents)
);
create index invoices_user_id_idx on invoices (user_id, issued_at desc);
comment on column invoices.buyer is 'The buyer as invoiced (name, e-mail, company, address, country, VAT id), kept as it was at issue.';

alter table users add column stripe_customer_id text;
comment on column users.stripe_customer_id is 'The card processor''s customer of this user, created for saving a payment method.';
