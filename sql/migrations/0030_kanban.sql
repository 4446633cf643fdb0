-- Kanban boards of a project (spec "Kanban"): columns with optional WIP limits, cards with
-- assignees, labels, threaded comments and an activity log, and attachments of comments.
-- Positions of columns in a board and of cards in a column are always 0…n−1: the unique
-- constraints below are deferred to commit, so a shift of several rows inside one
-- transaction passes, and a transaction that would leave a duplicate fails as a whole.
-- Every change of positions on a board first locks the board row (shared/kanban/lock.ts).

create table kanban_boards (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index kanban_boards_project_id_idx on kanban_boards (project_id, id);
comment on table kanban_boards is 'A kanban board of a project; its row is the lock every change of positions on the board takes.';

create table kanban_columns (
  id bigint generated always as identity primary key,
  board_id bigint not null references kanban_boards (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  wip_limit integer check (wip_limit between 1 and 10000),
  position integer not null check (position >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint kanban_columns_position_key unique (board_id, position) deferrable initially deferred
);
comment on column kanban_columns.wip_limit is 'At most this many cards; the server refuses a card into a full column (409 wip_limit_reached). May be below the count after a lowering.';

create table kanban_cards (
  id bigint generated always as identity primary key,
  board_id bigint not null references kanban_boards (id) on delete cascade,
  column_id bigint not null references kanban_columns (id) on delete cascade,
  position integer not null check (position >= 0),
  title text not null check (char_length(title) between 1 and 255),
  description text check (char_length(description) <= 20000),
  priority text not null default 'medium' check (priority in ('low', 'medium', 'high')),
  due_date date,
  estimated_hours numeric(8, 2) check (estimated_hours >= 0),
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint kanban_cards_position_key unique (column_id, position) deferrable initially deferred
);
create index kanban_cards_board_id_idx on kanban_cards (board_id);
comment on column kanban_cards.board_id is 'Denormalised from the column, so a board read and the board lock need no join.';

create table kanban_labels (
  id bigint generated always as identity primary key,
  board_id bigint not null references kanban_boards (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 64),
  color text not null check (color ~ '^#[0-9A-Fa-f]{6}$'),
  created_at timestamptz not null default now()
);
create index kanban_labels_board_id_idx on kanban_labels (board_id, id);

create table kanban_card_labels (
  card_id bigint not null references kanban_cards (id) on delete cascade,
  label_id bigint not null references kanban_labels (id) on delete cascade,
  primary key (card_id, label_id)
);
create index kanban_card_labels_label_id_idx on kanban_card_labels (label_id);

create table kanban_card_assignees (
  id bigint generated always as identity primary key,
  card_id bigint not null references kanban_cards (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  kanban_role text check (kanban_role in ('SRM', 'SDM', 'Flow Manager')),
  created_at timestamptz not null default now(),
  unique (card_id, user_id)
);
comment on column kanban_card_assignees.kanban_role is 'The kanban role label of the assignee on this card (spec: SRM, SDM, Flow Manager), or none.';

create table kanban_comments (
  id bigint generated always as identity primary key,
  card_id bigint not null references kanban_cards (id) on delete cascade,
  parent_id bigint references kanban_comments (id) on delete cascade,
  user_id bigint references users (id) on delete set null,
  body text not null check (char_length(body) between 1 and 20000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index kanban_comments_card_id_idx on kanban_comments (card_id, id);
create index kanban_comments_parent_id_idx on kanban_comments (parent_id);
comment on column kanban_comments.parent_id is 'The comment this one replies to; replies are one level deep (a reply to a reply answers its top comment).';

create table kanban_activities (
  id bigint generated always as identity primary key,
  card_id bigint not null references kanban_cards (id) on delete cascade,
  type text not null check (type in ('created', 'updated', 'commented', 'moved', 'assigned')),
  user_id bigint references users (id) on delete set null,
  description text not null,
  changes jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index kanban_activities_card_id_idx on kanban_activities (card_id, id);
comment on column kanban_activities.changes is 'Field → {old, new} for updates; {column_id: {old, new}} for moves.';

-- Files attached to kanban comments and to messages; one table, exactly one owner.
create table attachments (
  id bigint generated always as identity primary key,
  comment_id bigint references kanban_comments (id) on delete cascade,
  message_id bigint,
  user_id bigint references users (id) on delete set null,
  file_name text not null check (char_length(file_name) between 1 and 255),
  content_type text not null check (char_length(content_type) between 3 and 255),
  byte_size bigint not null check (byte_size >= 0),
  storage_key text not null unique check (char_length(storage_key) between 1 and 1024),
  created_at timestamptz not null default now(),
  check ((comment_id is null) <> (message_id is null))
);
create index attachments_comment_id_idx on attachments (comment_id) where comment_id is not null;
create index attachments_message_id_idx on attachments (message_id) where message_id is not null;
comment on table attachments is 'Uploaded files of kanban comments and messages; bytes in shared/storage, served only by a signed link as a download.';
comment on column attachments.file_name is 'The uploaded name, sanitised: no path parts, no control characters.';

create function attachments_collect_garbage() returns trigger language plpgsql as $$
begin
  insert into media_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  return null;
end
$$;
create trigger attachments_collect_garbage after delete on attachments
  for each row execute function attachments_collect_garbage();
comment on function attachments_collect_garbage() is 'A deleted attachment (also by a cascade from its card or thread) leaves its storage key for the media sweep.';
