-- Turning two-factor authentication off or making new recovery codes takes only the password
-- (DESIGN §6 fixes `{password}`), so a session plus a phished password could do either. The
-- account is mailed a link that undoes it: the two-factor state from just before is kept here
-- until the link is used or expires.

create table two_factor_restores (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  reason text not null check (reason in ('disabled', 'recovery_codes')),
  secret bytea not null,
  confirmed_at timestamptz not null,
  recovery_code_hashes bytea[] not null,
  token_hash bytea not null unique,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index two_factor_restores_user_id_idx on two_factor_restores (user_id);
comment on table two_factor_restores is
  'Two-factor state of an account from just before it was turned off or its recovery codes replaced, '
  'restored (and every session ended) by the single-use link mailed to the account, until expires_at.';
comment on column two_factor_restores.secret is 'The TOTP secret as users.two_factor_secret held it (sealed under APP_KEY).';
comment on column two_factor_restores.recovery_code_hashes is 'SHA-256 of the recovery codes still unused then; used ones stay used.';
