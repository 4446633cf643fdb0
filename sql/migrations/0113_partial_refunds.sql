-- Partial refunds. Stripe sends charge.refunded for every refund of a charge, partial ones
-- included (`amount_refunded` is the running total, `refunded` true only once all of it is
-- back); PayPal's refund carries the running total in its seller_payable_breakdown. Every
-- refund used to reverse all of the payment's credits and mark it refunded, so a goodwill
-- refund of one euro took a whole package back. A transaction now keeps the cents refunded so
-- far; credits are taken back in proportion, and the payment counts as refunded (and gives
-- up what it bought) once all of it is back.

alter table credit_transactions
  add column refunded_cents integer not null default 0 check (refunded_cents >= 0 and refunded_cents <= amount_cents);
update credit_transactions set refunded_cents = amount_cents where status = 'refunded';
comment on column credit_transactions.refunded_cents is
  'Cents refunded so far (the provider''s running total); equal to amount_cents once the status is refunded.';
