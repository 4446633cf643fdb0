-- Forms and reports of a project: each binds one table of one of the project's schemas.

create table project_forms (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  schema_id bigint not null references schemas (id) on delete cascade,
  table_name text not null check (char_length(table_name) between 1 and 255),
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  layout jsonb not null default '{"items": []}',
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index project_forms_project_id_idx on project_forms (project_id, id);

create table project_form_fields (
  id bigint generated always as identity primary key,
  form_id bigint not null references project_forms (id) on delete cascade,
  field_name text not null check (char_length(field_name) between 1 and 255),
  label text not null check (char_length(label) between 1 and 255),
  position integer not null,
  created_at timestamptz not null default now(),
  unique (form_id, field_name)
);

create table project_reports (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  schema_id bigint not null references schemas (id) on delete cascade,
  table_name text not null check (char_length(table_name) between 1 and 255),
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  layout jsonb not null default '{"bands": {"header": {"height": 60, "items": []}, "detail": {"height": 24, "items": []}, "footer": {"height": 40, "items": []}}}',
  pattern jsonb not null default '{"group_by": [], "sort_by": []}',
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index project_reports_project_id_idx on project_reports (project_id, id);

create table project_report_images (
  id bigint generated always as identity primary key,
  report_id bigint not null references project_reports (id) on delete cascade,
  storage_key text not null,
  content_type text not null,
  byte_size integer not null,
  width integer not null,
  height integer not null,
  sha256 text not null,
  created_at timestamptz not null default now()
);
create index project_report_images_report_id_idx on project_report_images (report_id, id);
