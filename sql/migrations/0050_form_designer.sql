-- The form designer: who may use it (grants besides patron membership, which is read from
-- patron_memberships), and its form sets of windows of elements.

create table form_designer_grants (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  access_type text not null check (access_type in ('credits', 'trial')),
  credits_paid integer not null default 0 check (credits_paid >= 0),
  granted_at timestamptz not null default now(),
  expires_at timestamptz,
  ledger_entry_id bigint,
  unique (user_id, access_type),
  check (access_type <> 'trial' or expires_at is not null)
);
comment on table form_designer_grants is
  'Form designer access other than patron membership: one unlock paid in credits (no expiry) and one trial per account.';

create table form_sets (
  id bigint generated always as identity primary key,
  creator_user_id bigint not null references users (id) on delete cascade,
  project_id bigint references projects (id) on delete set null,
  schema_id bigint references schemas (id) on delete set null,
  name text not null check (char_length(name) between 1 and 255),
  description text check (char_length(description) <= 5000),
  visibility text not null default 'private' check (visibility in ('private', 'team', 'public')),
  cloned_from_id bigint references form_sets (id) on delete set null,
  default_background_color text not null,
  default_window_color text not null,
  default_text_color text not null,
  default_button_color text not null,
  default_button_text_color text not null,
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index form_sets_creator_user_id_idx on form_sets (creator_user_id);
create index form_sets_visibility_idx on form_sets (visibility) where visibility <> 'private';
create index form_sets_project_id_idx on form_sets (project_id);
comment on column form_sets.project_id is 'The project whose schemas field placements refer to; settings (snap to grid) come from it.';

create table form_windows (
  id bigint generated always as identity primary key,
  form_set_id bigint not null references form_sets (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  display_name text check (char_length(display_name) <= 255),
  window_type text not null check (window_type in ('main_menu', 'create_edit', 'data_table')),
  min_width integer not null check (min_width > 0),
  min_height integer not null check (min_height > 0),
  default_width integer not null check (default_width >= min_width),
  default_height integer not null check (default_height >= min_height),
  background_color text not null,
  window_color text not null,
  text_color text,
  is_active boolean not null default true,
  sort_order integer not null default 0,
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index form_windows_form_set_id_idx on form_windows (form_set_id, sort_order, id);
comment on column form_windows.version is 'Bumped by every change to the window or its elements; a layout write names the version it read.';

create table form_elements (
  id bigint generated always as identity primary key,
  form_window_id bigint not null references form_windows (id) on delete cascade,
  element_type text not null check (element_type ~ '^[a-z][a-z_]{0,63}$'),
  x_position integer not null check (x_position >= 0),
  y_position integer not null check (y_position >= 0),
  width integer not null check (width > 0),
  height integer not null check (height > 0),
  sort_order integer not null default 0,
  is_visible boolean not null default true,
  tab_order integer not null check (tab_order >= 1),
  background_color text,
  border_width integer not null default 0 check (border_width >= 0),
  border_color text,
  anchor_right integer,
  anchor_bottom integer,
  anchor_width integer,
  anchor_height integer,
  container_orientation text check (container_orientation in ('vertical', 'horizontal')),
  container_gap integer,
  container_columns integer,
  max_fields integer,
  default_control_height integer,
  button_label text,
  button_icon text,
  button_action text,
  button_background_color text,
  button_text_color text,
  field_name text,
  control_type text check (control_type in ('text', 'number', 'date', 'dropdown')),
  link_table text,
  link_field text,
  link_display_field text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Deferred: inserting or moving an element shifts the others' tab order within one statement batch.
  constraint form_elements_tab_order_key unique (form_window_id, tab_order) deferrable initially deferred
);
comment on table form_elements is 'Every kind of element in one table; the kind-specific columns a kind does not use stay null.';
