-- Code adjustments: a user's edits to generated files, kept as a unified diff against the
-- generated version (with both versions, for the three-way merge) and re-applied to later
-- generations of the same template or generator. Applying them writes a new generation
-- (adjusted_from_id = the generation it started from) with one result row per adjustment;
-- the generation it started from is never changed.

create table code_adjustments (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  template_id bigint references templates (id) on delete cascade,
  generator_id bigint references generators (id) on delete cascade,
  file_path text collate "C" not null check (char_length(file_path) between 1 and 1024),
  base_generation_id bigint references code_generations (id) on delete set null,
  base_content text not null,
  adjusted_content text not null,
  diff text not null,
  additions integer not null check (additions >= 0),
  deletions integer not null check (deletions >= 0),
  is_active boolean not null default true,
  user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((template_id is null) <> (generator_id is null))
);
create index code_adjustments_template_idx on code_adjustments (template_id, id) where template_id is not null;
create index code_adjustments_generator_idx on code_adjustments (generator_id, id) where generator_id is not null;
create index code_adjustments_project_idx on code_adjustments (project_id, id);
comment on table code_adjustments is
  'Edits to generated files, keyed by the template or generator that produced the file and its path; applied in id order.';
comment on column code_adjustments.base_content is 'The generated file the edit was made on (the merge base).';
comment on column code_adjustments.adjusted_content is 'The file as edited (base_content with diff applied).';

alter table code_generations
  add column adjusted_from_id bigint references code_generations (id) on delete set null,
  add column apply_key text unique check (char_length(apply_key) <= 200);
create index code_generations_adjusted_from_id_idx on code_generations (adjusted_from_id) where adjusted_from_id is not null;
comment on column code_generations.adjusted_from_id is 'The generation whose files were copied and adjusted into this one.';
comment on column code_generations.apply_key is 'The job run that applied adjustments into this generation; a retry finds it instead of writing another.';

create table code_generation_adjustments (
  code_generation_id bigint not null references code_generations (id) on delete cascade,
  position integer not null check (position >= 0),
  adjustment_id bigint references code_adjustments (id) on delete set null,
  file_path text collate "C" not null check (char_length(file_path) between 1 and 1024),
  status text not null check (status in ('applied', 'already_present', 'conflict', 'file_missing')),
  conflicts integer not null default 0 check (conflicts >= 0),
  primary key (code_generation_id, position)
);
comment on table code_generation_adjustments is 'Per-adjustment results of the apply that wrote a generation (conflicts: number of conflict blocks in the file).';

alter table generators add column apply_adjustments boolean not null default false;
comment on column generators.apply_adjustments is 'Every run applies the active code adjustments of the generator and answers the adjusted generation.';
