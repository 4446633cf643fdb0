-- Administrators' refunds of euro store sales. POST /admin/store/purchases/{id}/refund answered
-- 409 refund_at_provider for a sale paid by card or wallet: the administrator had to refund it
-- in the provider's dashboard. It now queues the payments__refund job, which refunds what is
-- left of the payment at the provider (idempotently) and then applies the refund, which takes
-- the buyer's access and the seller's pending earning back. The transaction records that an
-- administrator asked for it, and which one.

alter table credit_transactions drop constraint credit_transactions_refund_reason_check;
alter table credit_transactions
  add constraint credit_transactions_refund_reason_check
    check (refund_reason in ('project_deleted', 'subscription_active', 'already_purchased', 'item_unavailable', 'admin_refund')),
  add column refund_requested_by bigint references users (id) on delete set null;
comment on column credit_transactions.refund_reason is
  'Why the service refunds this succeeded payment by itself: it delivered nothing (project_deleted, subscription_active, already_purchased, item_unavailable), or an administrator refunded the sale (admin_refund); null otherwise.';
comment on column credit_transactions.refund_requested_by is 'The administrator who asked for an admin_refund (null once their account is gone).';
