-- Credit balances and shortfalls are integer columns: a grant that would take a balance past
-- 2,147,483,647 (or a refund that would take a shortfall past it) failed inside
-- credit_ledger_apply with "integer out of range", which reached an administrator granting
-- credits as a 500. The function now answers such a movement with the outcome 'over_limit'
-- and writes nothing; shared/credits/ledger.ts turns it into a 422 on the amount. Replays are
-- still found first, so a retried movement that was applied answers as before.

create or replace function credit_ledger_apply(
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
    if v_shortfall::bigint + v_missing > 2147483647 then
      return query select 'over_limit'::text, null::bigint, null::integer, v_balance, v_shortfall;
      return;
    end if;
  else
    -- The first entry records the balance before any settling, so it is that sum that must fit.
    if v_balance::bigint + p_amount > 2147483647 then
      return query select 'over_limit'::text, null::bigint, null::integer, v_balance, v_shortfall;
      return;
    end if;
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
