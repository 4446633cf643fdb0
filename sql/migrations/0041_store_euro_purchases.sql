-- Store templates bought with euros: a card or wallet payment (credit_transactions of kind
-- store_template) whose webhook records the purchase; what it will record is kept beside it.

alter table credit_transactions drop constraint credit_transactions_kind_check;
alter table credit_transactions add constraint credit_transactions_kind_check
  check (kind in ('credit_package', 'subscription', 'patron', 'store_template'));

create table store_payment_intents (
  transaction_id bigint primary key references credit_transactions (id) on delete cascade,
  buyer_id bigint not null references users (id) on delete cascade,
  store_template_id bigint not null references store_templates (id) on delete cascade,
  version_id bigint not null references store_template_versions (id) on delete cascade,
  seller_cents integer not null check (seller_cents >= 0),
  created_at timestamptz not null default now()
);
create index store_payment_intents_buyer_idx on store_payment_intents (buyer_id, store_template_id);
comment on table store_payment_intents is 'A started euro purchase of a store template: the version and seller share fixed at the start, recorded as a purchase when the payment succeeds.';

alter table store_purchases add column transaction_id bigint unique references credit_transactions (id) on delete set null;
