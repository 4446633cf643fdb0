-- Git provider sign-in: a user's connections to GitHub, GitLab (gitlab.com or a self-hosted
-- instance) and Bitbucket, with their OAuth tokens sealed (AES-256-GCM under APP_KEY), and
-- the pending authorizations (`state`, bound to the user, single use, with the PKCE verifier).

create table git_connections (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  provider text not null check (provider in ('github', 'gitlab', 'bitbucket')),
  instance_url text not null check (char_length(instance_url) between 1 and 2048),
  account_id text not null check (char_length(account_id) between 1 and 255),
  account_login text not null check (char_length(account_login) between 1 and 255),
  account_name text check (char_length(account_name) <= 255),
  scopes text check (char_length(scopes) <= 2000),
  access_token_sealed bytea not null,
  refresh_token_sealed bytea,
  expires_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (user_id, provider, instance_url, account_id)
);
comment on table git_connections is 'A user''s signed-in account at a git host; tokens sealed, refreshed before use when they expire.';
comment on column git_connections.instance_url is 'The host the account lives on (the OAuth base; for GitLab the instance URL).';

create table git_oauth_states (
  state_hash text primary key check (state_hash ~ '^[0-9a-f]{64}$'),
  user_id bigint not null references users (id) on delete cascade,
  provider text not null check (provider in ('github', 'gitlab', 'bitbucket')),
  code_verifier_sealed bytea,
  redirect_uri text not null check (char_length(redirect_uri) <= 2048),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index git_oauth_states_user_id_idx on git_oauth_states (user_id, created_at);
comment on table git_oauth_states is 'Pending git sign-ins: SHA-256 of the state sent to the provider, its user, and the sealed PKCE verifier; used once.';
