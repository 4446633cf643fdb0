-- Foundation: accounts (the columns every later area relies on), the job records that
-- mirror graphile-worker's queue, worker heartbeats for crash recovery, and the spill
-- table for realtime events too large for a NOTIFY payload.

create table users (
  id bigint generated always as identity primary key,
  name text not null check (char_length(name) between 1 and 255),
  username text not null check (username ~ '^[A-Za-z0-9_.-]{2,64}$'),
  email text not null check (char_length(email) between 3 and 254),
  password_hash text,
  language text not null default 'en' check (language in ('en', 'de')),
  theme text not null default 'light' check (theme in ('light', 'dark', 'system')),
  email_verified_at timestamptz,
  is_seller boolean not null default false,
  kanban_initials text check (char_length(kanban_initials) <= 4),
  kanban_color text check (kanban_color ~ '^#[0-9A-Fa-f]{6}$'),
  tokens_revoked_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create unique index users_username_key on users (lower(username));
comment on column users.tokens_revoked_at is
  'Access and refresh tokens issued before this instant are refused (logout-all-devices, password change).';

create table user_roles (
  user_id bigint not null references users (id) on delete cascade,
  role text not null check (role in ('user', 'developer', 'admin', 'super_admin')),
  created_at timestamptz not null default now(),
  primary key (user_id, role)
);

create table personal_access_tokens (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  token_hash bytea not null,
  abilities text[] not null default '{*}',
  last_used_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz not null default now()
);
create index personal_access_tokens_user_id_idx on personal_access_tokens (user_id);
comment on column personal_access_tokens.token_hash is
  'SHA-256 of the random part of the plain-text token "<id>|<random>"; the plain text is shown once.';

create table jobs (
  id bigint generated always as identity primary key,
  kind text not null check (kind ~ '^[a-z0-9_]+__[a-z0-9_]+$'),
  status text not null default 'queued'
    check (status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  progress smallint not null default 0 check (progress between 0 and 100),
  progress_message text,
  result jsonb,
  error text,
  error_code text,
  error_details jsonb,
  attempts integer not null default 0,
  max_attempts integer not null check (max_attempts between 1 and 25),
  user_id bigint references users (id) on delete set null,
  project_id bigint,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz not null default now()
);
create index jobs_user_id_created_at_idx on jobs (user_id, created_at desc);
create index jobs_unfinished_idx on jobs (status, kind) where status in ('queued', 'running');
comment on table jobs is
  'One row per unit of background work; graphile-worker deletes its own rows when done, this one stays. '
  'The graphile-worker job of record N has the job key ''job:N''.';

create table worker_processes (
  id text primary key,
  hostname text not null,
  pid integer not null,
  worker_ids text[] not null default '{}',
  started_at timestamptz not null default now(),
  beat_at timestamptz not null default now()
);
create index worker_processes_beat_at_idx on worker_processes (beat_at);
comment on table worker_processes is
  'Heartbeats of live worker processes; the sweeper unlocks the jobs of processes that stopped beating.';

create table realtime_payloads (
  id bigint generated always as identity primary key,
  body jsonb not null,
  created_at timestamptz not null default now()
);
comment on table realtime_payloads is
  'Realtime events too large for pg_notify (8000 bytes); the notification carries only the id.';
