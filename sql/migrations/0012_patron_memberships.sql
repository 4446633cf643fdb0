-- Patron membership: a monthly paid level that unlocks patron features (kanban comment
-- attachments, the form designer). Kept as periods, one row per bought or renewed period,
-- so a lapsed membership leaves its history; a user is a patron while a period covers now.
create table patron_memberships (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  level integer not null check (level > 0),
  started_at timestamptz not null default now(),
  expires_at timestamptz not null,
  cancelled_at timestamptz,
  created_at timestamptz not null default now(),
  check (expires_at > started_at)
);
create index patron_memberships_user_id_expires_at_idx on patron_memberships (user_id, expires_at desc);
comment on table patron_memberships is
  'Periods of patron membership; a user is a patron while started_at <= now() < expires_at. Cancelling stops renewal, not the paid period.';
comment on column patron_memberships.cancelled_at is
  'Set when the member cancels: the period stays valid until expires_at and is not renewed.';
