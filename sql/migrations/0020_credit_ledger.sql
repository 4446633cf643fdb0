-- Credits: an account row per user holding the balance, and an append-only ledger whose
-- entries sum to it. Both change only together, under the account's row lock, through
-- credit_ledger_apply() below (one round trip, so the lock is held for one statement as a
-- bare `update … set balance = balance - n` would hold it).

create table credit_accounts (
  user_id bigint primary key references users (id) on delete cascade,
  balance integer not null default 0 check (balance >= 0),
  shortfall integer not null default 0 check (shortfall >= 0),
  updated_at timestamptz not null default now()
);
comment on table credit_accounts is
  'One row per user who ever held credits; balance equals the sum of the user''s credit_ledger entries.';
comment on column credit_accounts.shortfall is
  'Credits a refund could not take back because they were already spent; spending is refused while it is above zero, and incoming credits settle it first.';

create table credit_ledger (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  amount integer not null,
  balance_after integer not null check (balance_after >= 0),
  reason text not null check (char_length(reason) between 1 and 255),
  reference_type text check (char_length(reference_type) between 1 and 64),
  reference_id text check (char_length(reference_id) between 1 and 255),
  idempotency_key text not null check (char_length(idempotency_key) between 1 and 255),
  created_at timestamptz not null default now(),
  unique (user_id, idempotency_key)
);
create index credit_ledger_user_id_id_idx on credit_ledger (user_id, id desc);
create index credit_ledger_reference_idx on credit_ledger (reference_type, reference_id) where reference_type is not null;
comment on table credit_ledger is
  'Append-only credit movements: amount is signed (+ in, - out), balance_after the account balance after it. A refund that finds nothing left to take writes amount 0 and raises the shortfall.';
comment on column credit_ledger.idempotency_key is
  'Chosen by the caller (e.g. store-purchase:42); a second apply with the same key for the same user returns the first entry.';

-- Applies one movement. p_mode: 'spend' (refused when the balance does not cover it or a
-- shortfall is open), 'grant' (settles an open shortfall first, as a second entry), or
-- 'reverse' (takes what is there, the rest becomes shortfall). Returns outcome 'applied',
-- 'replayed' (the key was used before: that entry's values) or 'insufficient' (nothing written).
create function credit_ledger_apply(
  p_user_id bigint, p_mode text, p_amount integer, p_reason text,
  p_reference_type text, p_reference_id text, p_idempotency_key text
) returns table (outcome text, entry_id bigint, entry_amount integer, balance_after integer, shortfall integer)
language plpgsql as $$
declare
  v_balance integer;
  v_shortfall integer;
  v_delta integer;
  v_missing integer := 0;
  v_settle integer := 0;
  v_entry bigint;
  v_prior record;
begin
  if p_mode not in ('spend', 'grant', 'reverse') or p_amount is null or p_amount <= 0 then
    raise exception 'credit_ledger_apply: bad mode % or amount %', p_mode, p_amount using errcode = '22023';
  end if;
  select a.balance, a.shortfall into v_balance, v_shortfall from credit_accounts a where a.user_id = p_user_id for update;
  if not found then
    if p_mode = 'spend' then
      -- Nothing to spend from; check the key anyway so a replay still finds its entry.
      select l.id, l.amount, l.balance_after into v_prior from credit_ledger l
        where l.user_id = p_user_id and l.idempotency_key = p_idempotency_key;
      if found then
        return query select 'replayed'::text, v_prior.id, v_prior.amount, v_prior.balance_after, 0;
      else
        return query select 'insufficient'::text, null::bigint, null::integer, 0, 0;
      end if;
      return;
    end if;
    insert into credit_accounts (user_id) values (p_user_id) on conflict (user_id) do nothing;
    select a.balance, a.shortfall into v_balance, v_shortfall from credit_accounts a where a.user_id = p_user_id for update;
  end if;
  -- Read after the lock: every earlier writer of this account has committed or rolled back.
  select l.id, l.amount, l.balance_after into v_prior from credit_ledger l
    where l.user_id = p_user_id and l.idempotency_key = p_idempotency_key;
  if found then
    return query select 'replayed'::text, v_prior.id, v_prior.amount, v_prior.balance_after, v_shortfall;
    return;
  end if;
  if p_mode = 'spend' then
    if v_shortfall > 0 or v_balance < p_amount then
      return query select 'insufficient'::text, null::bigint, null::integer, v_balance, v_shortfall;
      return;
    end if;
    v_delta := -p_amount;
  elsif p_mode = 'reverse' then
    v_delta := -least(v_balance, p_amount);
    v_missing := p_amount + v_delta;
  else
    v_delta := p_amount;
    v_settle := least(v_shortfall, v_balance + p_amount);
  end if;
  insert into credit_ledger (user_id, amount, balance_after, reason, reference_type, reference_id, idempotency_key)
    values (p_user_id, v_delta, v_balance + v_delta, p_reason, p_reference_type, p_reference_id, p_idempotency_key)
    returning id into v_entry;
  if v_settle > 0 then
    insert into credit_ledger (user_id, amount, balance_after, reason, reference_type, reference_id, idempotency_key)
      values (p_user_id, -v_settle, v_balance + v_delta - v_settle, 'refund_shortfall_settled', p_reference_type, p_reference_id,
        left(p_idempotency_key, 240) || ':settle');
  end if;
  update credit_accounts a
    set balance = a.balance + v_delta - v_settle, shortfall = a.shortfall + v_missing - v_settle, updated_at = now()
    where a.user_id = p_user_id;
  return query select 'applied'::text, v_entry, v_delta, v_balance + v_delta, v_shortfall + v_missing - v_settle;
end;
$$;
comment on function credit_ledger_apply(bigint, text, integer, text, text, text, text) is
  'The only writer of credit_accounts.balance and credit_ledger; see shared/credits/ledger.ts.';
