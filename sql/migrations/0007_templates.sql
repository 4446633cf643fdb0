-- Templates (per project, or a user's own top-level ones), their variables and files, the
-- variable values a project keeps per template, generators (ordered templates + a schema +
-- values), and the links from code generations and archives to them.

create table templates (
  id bigint generated always as identity primary key,
  project_id bigint references projects (id) on delete cascade,
  owner_id bigint references users (id) on delete cascade,
  user_id bigint references users (id) on delete set null,
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  content text not null default '' check (char_length(content) <= 4000000),
  engine_type text not null default 'ultimate' check (engine_type in ('ultimate')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((project_id is null) = (owner_id is not null))
);
create index templates_project_id_idx on templates (project_id, id) where project_id is not null;
create index templates_owner_id_idx on templates (owner_id, id) where owner_id is not null;
comment on table templates is 'A template of a project (project_id set) or a top-level template of one user (owner_id set), never both.';
comment on column templates.owner_id is 'Owner of a top-level template; the template goes with its owner''s account.';
comment on column templates.user_id is 'Who created the template (kept as null when that account is closed).';

create table template_variables (
  id bigint generated always as identity primary key,
  template_id bigint not null references templates (id) on delete cascade,
  name text not null check (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'),
  description text not null default '' check (char_length(description) <= 5000),
  type text not null default 'string' check (type in ('string', 'number', 'boolean', 'list', 'object', 'schema')),
  required boolean not null default false,
  default_value jsonb,
  position integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (template_id, name)
);
comment on column template_variables.default_value is 'JSON value used when a run supplies none (never a schema id: schema variables have no default).';

create table template_files (
  id bigint generated always as identity primary key,
  template_id bigint not null references templates (id) on delete cascade,
  file_name text collate "C" not null check (char_length(file_name) between 1 and 1024),
  content text not null default '' check (char_length(content) <= 4000000),
  "order" integer not null default 0,
  repeat text check (char_length(repeat) between 1 and 255),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (template_id, file_name)
);
comment on column template_files.file_name is 'Output path, may hold placeholders (DESIGN §10).';
comment on column template_files.repeat is 'Collection path (e.g. schema.tables): the file is rendered once per element.';

create table template_variable_values (
  project_id bigint not null references projects (id) on delete cascade,
  template_id bigint not null references templates (id) on delete cascade,
  "values" jsonb not null default '{}',
  updated_by bigint references users (id) on delete set null,
  updated_at timestamptz not null default now(),
  primary key (project_id, template_id)
);
create index template_variable_values_template_id_idx on template_variable_values (template_id);
comment on table template_variable_values is 'Saved variable values of a template inside one project; a run''s own values win over them.';

create table generators (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  team_id bigint references teams (id) on delete set null,
  project_id bigint not null references projects (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  status text not null default 'Draft' check (status in ('Draft', 'Published', 'Archived')),
  schema_id bigint references schemas (id) on delete set null,
  "values" jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index generators_user_id_idx on generators (user_id, id);
create index generators_team_id_idx on generators (team_id, id) where team_id is not null;
create index generators_project_id_idx on generators (project_id);
comment on column generators.user_id is 'The owner of the generator.';
comment on column generators."values" is 'Variable values by name given to every template of the run.';

create table generator_templates (
  generator_id bigint not null references generators (id) on delete cascade,
  template_id bigint not null references templates (id) on delete cascade,
  position integer not null,
  primary key (generator_id, template_id)
);
create index generator_templates_template_id_idx on generator_templates (template_id);
comment on table generator_templates is 'The ordered templates a generator runs as one generation.';

alter table code_generations
  add column job_id bigint unique references jobs (id) on delete set null,
  add constraint code_generations_template_id_fkey foreign key (template_id) references templates (id) on delete set null,
  add constraint code_generations_generator_id_fkey foreign key (generator_id) references generators (id) on delete set null;
create index code_generations_template_id_idx on code_generations (template_id) where template_id is not null;
create index code_generations_generator_id_idx on code_generations (generator_id) where generator_id is not null;
comment on column code_generations.job_id is 'The templates__execute job that recorded the generation; a retried job finds its generation instead of recording a second one.';

alter table project_archives
  add column job_id bigint references jobs (id) on delete set null,
  add column deleted_at timestamptz;
comment on column project_archives.job_id is 'The archives__build job that builds (or last built) the zip.';
comment on column project_archives.deleted_at is 'Set when the zip was removed from storage (expired or deleted); downloads then answer 404.';
