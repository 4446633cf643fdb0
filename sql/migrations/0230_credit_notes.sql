-- Credit notes. A refunded payment kept its invoice and nothing recorded the refund on paper;
-- an invoice is never changed or deleted, so a refund (whole or partial) of an invoiced
-- payment now gets a credit note in the transaction that applies it: its own gap-free number
-- series per year (CN-2026-000001), the invoice it corrects, the buyer as on that invoice, and
-- the refunded amount split at the invoice's VAT rate. Credit notes take their ids from the
-- invoices' sequence, so GET /billing/invoices/{id} names either without ambiguity.

create table credit_note_counters (
  year integer primary key,
  last_number integer not null check (last_number >= 0)
);
comment on table credit_note_counters is 'Last credit note number per year; incremented under its row lock so numbers have no gaps.';

create table credit_notes (
  id bigint primary key default nextval('invoices_id_seq'),
  number text not null unique,
  user_id bigint not null references users (id) on delete restrict,
  invoice_id bigint not null references invoices (id) on delete restrict,
  transaction_id bigint not null references credit_transactions (id) on delete restrict,
  issued_at timestamptz not null default now(),
  refunded_from_cents integer not null check (refunded_from_cents >= 0),
  refunded_to_cents integer not null,
  buyer jsonb not null,
  lines jsonb not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  net_cents integer not null check (net_cents >= 0),
  vat_rate numeric(5, 2) not null check (vat_rate >= 0),
  vat_cents integer not null check (vat_cents >= 0),
  total_cents integer not null check (total_cents > 0),
  check (net_cents + vat_cents = total_cents),
  check (refunded_to_cents - refunded_from_cents = total_cents),
  unique (invoice_id, refunded_from_cents),
  unique (invoice_id, refunded_to_cents)
);
create index credit_notes_user_id_idx on credit_notes (user_id, issued_at desc);
create index credit_notes_transaction_id_idx on credit_notes (transaction_id);
comment on column credit_notes.id is 'Drawn from the invoices'' sequence: invoices and credit notes share one id space.';
comment on column credit_notes.refunded_from_cents is
  'The payment''s refunded total before this refund; refunded_to_cents after it. One credit note per step of the running total, so a replayed refund event finds its step taken.';
comment on column credit_notes.buyer is 'The buyer as on the corrected invoice.';
