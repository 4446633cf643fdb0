-- Support tickets (issue 19): a user's requests for help and the conversation on each;
-- administrators' internal notes live in the same conversation, flagged, and are never
-- shown to the user. Status moves open → pending (waiting for the user) → resolved → closed.

create table support_tickets (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  subject text not null check (char_length(subject) between 1 and 200),
  category text not null check (category in ('general', 'account', 'billing', 'technical', 'bug', 'feature_request')),
  priority text not null default 'normal' check (priority in ('low', 'normal', 'high', 'urgent')),
  status text not null default 'open' check (status in ('open', 'pending', 'resolved', 'closed')),
  assigned_to bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  closed_at timestamptz
);
create index support_tickets_user_id_idx on support_tickets (user_id, id desc);
create index support_tickets_status_idx on support_tickets (status, id desc);

create table support_ticket_messages (
  id bigint generated always as identity primary key,
  ticket_id bigint not null references support_tickets (id) on delete cascade,
  author_id bigint references users (id) on delete set null,
  body text not null check (char_length(body) between 1 and 10000),
  is_internal boolean not null default false,
  from_staff boolean not null default false,
  created_at timestamptz not null default now()
);
create index support_ticket_messages_ticket_id_idx on support_ticket_messages (ticket_id, id);
comment on column support_ticket_messages.is_internal is 'An administrator''s note: never returned to the ticket''s user, never notified.';
