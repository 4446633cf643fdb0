-- Parsed database schemas of a project, the anchors that give their tables and fields
-- stable ids, label translations, and stand-alone parses (POST /sql-parse).

create table schemas (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  user_id bigint references users (id) on delete set null,
  name text not null check (char_length(name) between 1 and 255),
  database_type text not null check (database_type in ('MySQL', 'PostgreSQL', 'SQLite', 'MSSQL', 'Firebird')),
  sql_text text not null,
  parsed jsonb,
  warnings jsonb not null default '[]',
  tables_count integer not null default 0,
  status text not null default 'parsing' check (status in ('parsing', 'ready')),
  revision bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (status <> 'ready' or parsed is not null)
);
create index schemas_project_id_idx on schemas (project_id, id) where status = 'ready';
comment on column schemas.parsed is 'The parsed schema (DESIGN §9) as shared/sqlddl returns it; the source of exports, comparisons and generation.';
comment on column schemas.status is 'parsing: created, first parse not finished (hidden from reads); ready: parsed at least once.';
comment on column schemas.revision is 'Id of the schema_revisions row applied last; a slower parse of an older revision never overwrites a newer one.';

create table schema_revisions (
  id bigint generated always as identity primary key,
  schema_id bigint not null references schemas (id) on delete cascade,
  user_id bigint references users (id) on delete set null,
  name text not null check (char_length(name) between 1 and 255),
  database_type text not null check (database_type in ('MySQL', 'PostgreSQL', 'SQLite', 'MSSQL', 'Firebird')),
  sql_text text not null,
  created_at timestamptz not null default now()
);
create index schema_revisions_schema_id_idx on schema_revisions (schema_id);
comment on table schema_revisions is 'A create or an update waiting for its parse job; applied to the schema only when it parses, then removed.';

create table schema_tables (
  id bigint generated always as identity primary key,
  schema_id bigint not null references schemas (id) on delete cascade,
  position integer not null,
  qualified_name text not null,
  unique (schema_id, qualified_name)
);
comment on table schema_tables is 'Stable ids for the tables of a parsed schema, kept across re-parses by qualified name.';

create table schema_fields (
  id bigint generated always as identity primary key,
  table_id bigint not null references schema_tables (id) on delete cascade,
  position integer not null,
  field_name text not null,
  unique (table_id, field_name)
);
comment on table schema_fields is 'Stable ids for the fields of a parsed table, kept across re-parses by name.';

create table schema_translations (
  id bigint generated always as identity primary key,
  schema_id bigint not null references schemas (id) on delete cascade,
  language text not null check (language ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$'),
  table_name text not null check (char_length(table_name) between 1 and 255),
  field_name text check (char_length(field_name) between 1 and 255),
  label text not null check (char_length(label) between 1 and 500),
  description text not null default '' check (char_length(description) <= 5000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index schema_translations_key on schema_translations (schema_id, language, table_name, coalesce(field_name, ''));
comment on table schema_translations is 'Labels of a schema''s tables (field_name null) and fields per language; keyed by name so they survive re-parses.';

create table sql_parses (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  database_type text not null check (database_type in ('MySQL', 'PostgreSQL', 'SQLite', 'MSSQL', 'Firebird')),
  sql_text text not null,
  parsed jsonb,
  warnings jsonb not null default '[]',
  created_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '7 days'
);
create index sql_parses_expires_at_idx on sql_parses (expires_at);
comment on table sql_parses is 'Stand-alone parses (POST /sql-parse), readable by their author until they expire.';
