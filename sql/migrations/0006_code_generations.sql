-- Code generations (one per template execute or generator run), the files they produced,
-- and the zip archive built from them.

create table code_generations (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  user_id bigint references users (id) on delete set null,
  template_id bigint,
  generator_id bigint,
  schema_id bigint references schemas (id) on delete set null,
  variables jsonb not null default '{}',
  file_count integer not null default 0 check (file_count >= 0),
  total_bytes bigint not null default 0 check (total_bytes >= 0),
  created_at timestamptz not null default now()
);
create index code_generations_project_id_idx on code_generations (project_id, id desc);
comment on column code_generations.template_id is 'The executed template (foreign key added with the templates tables).';
comment on column code_generations.generator_id is 'The generator run (foreign key added with the generators table).';

create table code_generation_files (
  code_generation_id bigint not null references code_generations (id) on delete cascade,
  path text collate "C" not null check (char_length(path) between 1 and 1024),
  content bytea not null,
  size integer not null check (size >= 0),
  primary key (code_generation_id, path)
);
comment on table code_generation_files is 'The files a generation produced, relative POSIX paths inside the output root.';

create table project_archives (
  id bigint generated always as identity primary key,
  code_generation_id bigint not null unique references code_generations (id) on delete cascade,
  status text not null default 'building' check (status in ('building', 'ready', 'failed')),
  file_path text,
  file_size bigint,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  check (status <> 'ready' or (file_path is not null and file_size is not null))
);
create index project_archives_expires_at_idx on project_archives (expires_at) where expires_at is not null;
comment on column project_archives.file_path is 'Storage key of the zip (shared/storage).';
