-- Whether a user has a saved card. GET /billing/subscription answered has_payment_method true as
-- soon as POST /billing/payment-method had created the card processor's customer and a
-- SetupIntent, before (or without) the user confirming any card. The card processor's
-- setup_intent.succeeded webhook now records the saved card. Users who saved one before this
-- migration show false until they save one again: which SetupIntents were confirmed is not known here.

alter table users add column payment_method_saved_at timestamptz;
comment on column users.payment_method_saved_at is
  'When the card processor last reported a SetupIntent of this user''s customer succeeded (a card saved for later payments).';
