-- Message threads of a project (spec "Messages"): whoever may view the project reads and
-- posts; each reader's last read message gives their unread count.

create table message_threads (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  subject text not null check (char_length(subject) between 1 and 255),
  created_by bigint references users (id) on delete set null,
  latest_message_at timestamptz not null default now(),
  created_at timestamptz not null default now()
);
create index message_threads_project_id_idx on message_threads (project_id, latest_message_at desc, id desc);
comment on column message_threads.latest_message_at is 'When the newest message was posted; the caller''s thread list is ordered by it.';

create table messages (
  id bigint generated always as identity primary key,
  thread_id bigint not null references message_threads (id) on delete cascade,
  user_id bigint references users (id) on delete set null,
  body text not null check (char_length(body) between 1 and 20000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index messages_thread_id_idx on messages (thread_id, id);

alter table attachments add constraint attachments_message_id_fkey foreign key (message_id) references messages (id) on delete cascade;

create table message_thread_reads (
  thread_id bigint not null references message_threads (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  last_read_message_id bigint not null default 0,
  primary key (thread_id, user_id)
);
comment on table message_thread_reads is 'The newest message of a thread each user has read (reading the thread or posting in it); later messages of others are unread.';
