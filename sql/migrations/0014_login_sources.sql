-- Addresses an account signed in from: the lockout of an e-mail across all addresses (which
-- anyone can trigger) does not apply from an address that signed in successfully lately.

create table login_sources (
  user_id bigint not null references users (id) on delete cascade,
  address text not null check (char_length(address) between 1 and 100),
  last_success_at timestamptz not null default now(),
  primary key (user_id, address)
);
create index login_sources_last_success_at_idx on login_sources (last_success_at);
comment on table login_sources is
  'Client addresses of successful password checks per account (kept 30 days): these are exempt from the per-e-mail lockout across addresses.';
