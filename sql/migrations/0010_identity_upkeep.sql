-- Identity upkeep: failed logins are checked and counted in one statement, so parallel
-- guesses cannot all pass a check made before any of them was counted; and indexes that let
-- maintenance__cleanup find expired identity rows without reading whole tables.

create function login_attempt_take(p_keys text[], p_limits integer[], p_window timestamptz)
returns integer
language plpgsql as $$
declare
  v_full integer;
begin
  -- Rows are created and then locked in key order, so attempts sharing keys (one e-mail
  -- from several addresses) wait for each other instead of deadlocking.
  insert into rate_limit_counters (key, window_start, count)
  select k, p_window, 0 from unnest(p_keys) as k order by k
  on conflict (key, window_start) do nothing;
  perform 1 from rate_limit_counters
  where key = any (p_keys) and window_start = p_window
  order by key
  for update;
  select a.i into v_full
  from unnest(p_keys, p_limits) with ordinality as a (key, lim, i)
  join rate_limit_counters r on r.key = a.key and r.window_start = p_window
  where r.count >= a.lim
  order by a.i
  limit 1;
  if v_full is not null then
    return v_full;
  end if;
  update rate_limit_counters set count = count + 1 where key = any (p_keys) and window_start = p_window;
  return 0;
end $$;
comment on function login_attempt_take is
  'Counts one login attempt on every key of the window unless a key has reached its limit; '
  'returns 0 when counted, else the 1-based position of the first key at its limit (nothing is counted then).';

create index rate_limit_counters_window_start_idx on rate_limit_counters (window_start);
create index revoked_access_tokens_expires_at_idx on revoked_access_tokens (expires_at);
create index two_factor_challenges_expires_at_idx on two_factor_challenges (expires_at);
create index trusted_devices_expires_at_idx on trusted_devices (expires_at);
create index password_resets_expires_at_idx on password_resets (expires_at);
