-- Identity: passwords and two-factor, seller profile, OAuth server state (clients, signing
-- keys, oidc-provider models), password resets, trusted devices, revoked access tokens,
-- rate-limit counters and file storage (outbox e-mails, later attachments and archives).

alter table users
  add column password_changed_at timestamptz,
  add column two_factor_secret bytea,
  add column two_factor_pending_secret bytea,
  add column two_factor_confirmed_at timestamptz,
  add column two_factor_last_step bigint,
  add column company_name text check (char_length(company_name) <= 255),
  add column company_address text check (char_length(company_address) <= 1000),
  add column company_country text check (company_country ~ '^[A-Z]{2}$'),
  add column vat_id text check (char_length(vat_id) <= 32),
  add column payout_method text check (payout_method in ('bank_transfer')),
  add column bank_iban bytea,
  add column bank_account_holder text check (char_length(bank_account_holder) <= 255);
comment on column users.two_factor_secret is 'TOTP secret, AES-256-GCM under APP_KEY; set once enrollment is confirmed.';
comment on column users.two_factor_last_step is 'Time step of the last TOTP code accepted; a code is never accepted twice.';
comment on column users.bank_iban is 'IBAN, AES-256-GCM under APP_KEY; never returned in full.';

create table two_factor_recovery_codes (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  code_hash bytea not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index two_factor_recovery_codes_user_id_idx on two_factor_recovery_codes (user_id);

create table two_factor_challenges (
  token_hash bytea primary key,
  user_id bigint not null references users (id) on delete cascade,
  device_id text,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
comment on table two_factor_challenges is 'The two_factor_token of a login waiting for its second factor; single use, short-lived.';

create table trusted_devices (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  device_hash bytea not null,
  browser text check (char_length(browser) <= 255),
  expires_at timestamptz not null,
  last_used_at timestamptz,
  created_at timestamptz not null default now(),
  unique (user_id, device_hash)
);

create table password_resets (
  user_id bigint primary key references users (id) on delete cascade,
  token_hash bytea not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

create table oauth_clients (
  client_id text primary key check (client_id ~ '^[A-Za-z0-9_.-]{1,128}$'),
  name text not null,
  secret bytea not null,
  grant_types text[] not null default '{password,refresh_token}',
  first_party boolean not null default false,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
comment on column oauth_clients.secret is 'Client secret, AES-256-GCM under APP_KEY (oidc-provider compares it in plain text).';

create table oauth_signing_keys (
  kid text primary key,
  private_jwk bytea not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
comment on table oauth_signing_keys is 'RS256 keys of the OAuth server, shared by every web process; private JWK encrypted under APP_KEY.';

create table oauth_models (
  model text not null,
  id text not null,
  payload jsonb not null,
  grant_id text,
  account_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  consumed_at timestamptz,
  primary key (model, id)
);
create index oauth_models_grant_id_idx on oauth_models (grant_id) where grant_id is not null;
create index oauth_models_account_id_idx on oauth_models (account_id) where account_id is not null;
create index oauth_models_expires_at_idx on oauth_models (expires_at);
comment on table oauth_models is 'oidc-provider adapter storage: grants, refresh tokens and the other models it persists.';

create table revoked_access_tokens (
  jti text primary key,
  user_id bigint not null references users (id) on delete cascade,
  expires_at timestamptz not null
);
comment on table revoked_access_tokens is 'Access tokens ended early by /logout, kept until they would have expired anyway.';

-- Counters are disposable (a crash may lose the current window), so no WAL is written.
create unlogged table rate_limit_counters (
  key text not null,
  window_start timestamptz not null,
  count integer not null,
  primary key (key, window_start)
);

create function rate_limit_take(p_key text, p_window timestamptz, p_wanted integer, p_limit integer)
returns table (granted integer, total integer)
language plpgsql as $$
declare
  v_count integer;
begin
  insert into rate_limit_counters as r (key, window_start, count)
  values (p_key, p_window, 0)
  on conflict (key, window_start) do nothing;
  select r.count into v_count from rate_limit_counters r
  where r.key = p_key and r.window_start = p_window for update;
  granted := greatest(0, least(p_wanted, p_limit - v_count));
  total := v_count + granted;
  if granted > 0 then
    update rate_limit_counters set count = total where key = p_key and window_start = p_window;
  end if;
  return next;
end $$;
comment on function rate_limit_take is
  'Takes up to p_wanted units of the p_limit budget of a key''s window; returns what was granted and the new total.';

create table stored_files (
  id bigint generated always as identity primary key,
  key text not null unique check (char_length(key) between 1 and 1024),
  content_type text not null default 'application/octet-stream',
  size bigint not null default 0,
  complete boolean not null default false,
  expires_at timestamptz,
  created_at timestamptz not null default now()
);
create index stored_files_expires_at_idx on stored_files (expires_at) where expires_at is not null;
comment on table stored_files is
  'Default storage driver: files kept in PostgreSQL, in chunks, so every process can stream them; '
  'a file is readable once complete.';

create table stored_file_chunks (
  file_id bigint not null references stored_files (id) on delete cascade,
  seq integer not null,
  data bytea not null,
  primary key (file_id, seq)
);
