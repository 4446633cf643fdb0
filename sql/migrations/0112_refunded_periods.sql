-- A subscription period or patron membership period bought by card or wallet names the
-- payment that bought it, so a refund of that payment can take the period back. Until now a
-- refunded plan or patron payment left its period running: the service kept the period and
-- the buyer kept the money.

alter table subscriptions add column transaction_id bigint references credit_transactions (id) on delete set null;
create unique index subscriptions_transaction_id_key on subscriptions (transaction_id) where transaction_id is not null;
comment on column subscriptions.transaction_id is
  'The card or wallet payment that bought this period (null when paid in credits or given by default); its refund ends the period.';

alter table patron_memberships add column transaction_id bigint references credit_transactions (id) on delete set null;
create unique index patron_memberships_transaction_id_key on patron_memberships (transaction_id) where transaction_id is not null;
comment on column patron_memberships.transaction_id is
  'The card or wallet payment that bought this period (null when paid in credits or renewed); its refund ends the period.';
