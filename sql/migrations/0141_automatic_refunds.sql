-- Payments the service refunds by itself. A payment that succeeds but can deliver nothing (a
-- plan for a project deleted meanwhile, a second period of a plan already running, a store
-- template the buyer bought meanwhile through another payment) used to keep the money until an
-- operator refunded it by hand. The webhook job that meets such a success now records why and
-- queues a payments__refund job, which asks the provider to refund the payment and applies the
-- refund as a refund webhook would.

alter table credit_transactions
  add column refund_reason text check (refund_reason in ('project_deleted', 'subscription_active', 'already_purchased', 'item_unavailable')),
  add column refund_requested_at timestamptz,
  add column provider_refund_id text,
  add constraint credit_transactions_refund_requested check ((refund_reason is null) = (refund_requested_at is null));
comment on column credit_transactions.refund_reason is
  'Why the service refunds this succeeded payment by itself (it delivered nothing); null for a payment that delivered.';
comment on column credit_transactions.provider_refund_id is
  'The provider''s refund (Stripe re_…, PayPal refund id) of an automatic refund.';
