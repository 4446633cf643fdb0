-- A refunded store purchase no longer keeps its buyer from buying the template again. The
-- unique (buyer_id, store_template_id) key held refunded rows too: a refunded buyer saw
-- is_purchased false and can_purchase true, yet a credit purchase answered 409
-- already_purchased, and a euro purchase started, took the payment, and its webhook then met
-- the key and recorded nothing. Only a completed purchase is now unique per buyer and
-- template; a purchase after a refund is a new row (its own ledger key and earning), and
-- refunded rows stay as history.
alter table store_purchases drop constraint store_purchases_buyer_id_store_template_id_key;
create unique index store_purchases_completed_key on store_purchases (buyer_id, store_template_id) where status = 'completed';
create index store_purchases_buyer_idx on store_purchases (buyer_id, created_at, id);
comment on index store_purchases_completed_key is 'One completed purchase per buyer and template; refunded ones are history and do not block buying again.';
