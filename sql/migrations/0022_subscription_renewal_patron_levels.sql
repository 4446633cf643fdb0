-- Subscriptions bought and renewed with credits (or by card), their daily renewal, patron
-- levels sold the same way, and the monthly credit award at login.

alter table plans
  add column price_credits integer not null default 0 check (price_credits >= 0),
  add column monthly_credits integer not null default 0 check (monthly_credits >= 0);
update plans set price_credits = 400, monthly_credits = 200 where code = 'pro';
update plans set price_credits = 1600, monthly_credits = 1000 where code = 'team';
comment on column plans.price_credits is 'Price of one period paid in credits (price_cents is the card price); 0 renews for free.';
comment on column plans.monthly_credits is 'Credits the owner of a project on this plan receives at the first login of each calendar month.';

alter table subscriptions
  add column expired_at timestamptz,
  add column renewal_failed_at timestamptz,
  add column renewal_error text check (char_length(renewal_error) <= 255),
  add column renewals integer not null default 0 check (renewals >= 0);
comment on column subscriptions.expired_at is
  'Set by the renewal job when the period ran out without renewal (cancelled, or not enough credits): the project is soft-locked from then on, whatever the clock says. A renewal clears it.';
comment on column subscriptions.renewals is 'Periods renewed so far; part of the idempotency key of the next renewal charge.';

create table patron_levels (
  level integer primary key check (level > 0),
  name text not null check (char_length(name) between 1 and 100),
  price_credits integer not null check (price_credits >= 0),
  price_cents integer not null check (price_cents >= 0),
  monthly_credits integer not null default 0 check (monthly_credits >= 0),
  duration_days integer not null default 30 check (duration_days > 0)
);
insert into patron_levels (level, name, price_credits, price_cents, monthly_credits) values
  (1, 'Supporter', 300, 300, 50),
  (2, 'Patron', 700, 700, 150),
  (3, 'Benefactor', 1500, 1500, 400);
comment on table patron_levels is 'Monthly patron membership levels; a bought period is a patron_memberships row.';

create table credit_monthly_awards (
  user_id bigint not null references users (id) on delete cascade,
  month date not null check (extract(day from month) = 1),
  credits integer not null check (credits >= 0),
  ledger_entry_id bigint references credit_ledger (id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (user_id, month)
);
comment on table credit_monthly_awards is 'One row per user and calendar month (UTC) in which the monthly credits were awarded at login.';

alter table patron_memberships
  add column renewed_at timestamptz,
  add column lapsed_at timestamptz;
comment on column patron_memberships.renewed_at is 'Set when the renewal job (or a purchase) added the period that follows this one.';
comment on column patron_memberships.lapsed_at is 'Set when the renewal job found the period ended unrenewed (cancelled, or not enough credits).';
