-- Web Push (issue 19): the browsers' PushSubscriptions of each user. The endpoint is the
-- push service's URL for one browser; its keys (p256dh, auth) are sealed under APP_KEY.

create table push_subscriptions (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  endpoint text not null check (char_length(endpoint) between 10 and 2048),
  keys_sealed bytea not null,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  last_success_at timestamptz,
  unique (endpoint)
);
create index push_subscriptions_user_id_idx on push_subscriptions (user_id);
comment on column push_subscriptions.keys_sealed is 'The subscription''s {p256dh, auth}, AES-256-GCM under APP_KEY; never returned.';
comment on column push_subscriptions.endpoint is 'One browser''s push URL; a second account subscribing the same browser takes it over.';
