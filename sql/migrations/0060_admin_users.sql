-- Administration of users (issue 19): accounts can be disabled, and every change an
-- administrator makes is written to an audit log (who, what, before → after, when).

alter table users add column disabled_at timestamptz;
comment on column users.disabled_at is
  'Set by an administrator: the account''s tokens stop working at once and it cannot sign in; null re-enables it.';

create table audit_log (
  id bigint generated always as identity primary key,
  actor_id bigint references users (id) on delete set null,
  action text not null check (action ~ '^[a-z_]+\.[a-z_]+$'),
  subject_type text not null check (char_length(subject_type) <= 64),
  subject_id bigint,
  before jsonb,
  after jsonb,
  created_at timestamptz not null default now()
);
create index audit_log_created_at_idx on audit_log (created_at desc, id desc);
create index audit_log_subject_idx on audit_log (subject_type, subject_id);
comment on table audit_log is
  'Append-only record of administrative changes; actor_id is kept null when the acting account is deleted, the row stays.';
