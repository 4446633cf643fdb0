-- Projects, their subscriptions and plans, teams with roles and invitations, and the
-- outbox of internal events (ProjectUpdated, ProjectLocked, …) that webhooks consume.

create table plans (
  id bigint generated always as identity primary key,
  code text not null unique check (code ~ '^[a-z0-9_-]{2,32}$'),
  name text not null,
  credits integer not null check (credits >= 0),
  duration_days integer not null check (duration_days > 0),
  price_cents integer not null default 0 check (price_cents >= 0),
  is_default boolean not null default false,
  created_at timestamptz not null default now()
);
create unique index plans_one_default on plans (is_default) where is_default;
insert into plans (code, name, credits, duration_days, price_cents, is_default) values
  ('free', 'Free', 100, 365, 0, true),
  ('pro', 'Pro', 2000, 30, 1900, false),
  ('team', 'Team', 10000, 30, 7900, false);
comment on table plans is 'Subscription plans as data; a new project gets the default plan.';

create table projects (
  id bigint generated always as identity primary key,
  owner_id bigint not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  is_public boolean not null default false,
  is_locked boolean not null default false,
  allow_join_requests boolean not null default false,
  join_code text check (join_code ~ '^[A-Za-z0-9_-]{6,32}$'),
  form_designer_snap_to_grid boolean not null default true,
  form_designer_grid_size integer not null default 10 check (form_designer_grid_size between 1 and 200),
  archived_at timestamptz,
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index projects_owner_id_idx on projects (owner_id) where deleted_at is null;
create index projects_public_idx on projects (updated_at desc) where is_public and deleted_at is null;
create unique index projects_join_code_key on projects (join_code) where join_code is not null;
comment on column projects.deleted_at is 'Soft delete: the row stays, every read treats the project as gone.';

create table subscriptions (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  plan_id bigint not null references plans (id) on delete restrict,
  started_at timestamptz not null default now(),
  expires_at timestamptz not null,
  credits_allocated integer not null check (credits_allocated >= 0),
  credits_used integer not null default 0 check (credits_used >= 0),
  cancelled_at timestamptz,
  created_at timestamptz not null default now()
);
create index subscriptions_project_id_idx on subscriptions (project_id, started_at desc);
comment on table subscriptions is 'A project''s subscriptions; the latest one decides whether the project is soft-locked (expired).';

create table team_roles (
  id integer primary key,
  name text not null unique
);
insert into team_roles (id, name) values (1, 'owner'), (2, 'admin'), (3, 'member'), (4, 'viewer');

create table teams (
  id bigint generated always as identity primary key,
  owner_id bigint not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  description text not null default '' check (char_length(description) <= 5000),
  join_project_id bigint unique,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on column teams.join_project_id is 'Set on the team people join a project into with its join code (one per project).';

create table team_members (
  id bigint generated always as identity primary key,
  team_id bigint not null references teams (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  role_id integer not null references team_roles (id) on delete restrict,
  joined_at timestamptz not null default now(),
  unique (team_id, user_id)
);
create index team_members_user_id_idx on team_members (user_id);

create table team_projects (
  team_id bigint not null references teams (id) on delete cascade,
  project_id bigint not null references projects (id) on delete cascade,
  attached_at timestamptz not null default now(),
  primary key (team_id, project_id)
);
create index team_projects_project_id_idx on team_projects (project_id);

create table team_invitations (
  id bigint generated always as identity primary key,
  team_id bigint not null references teams (id) on delete cascade,
  email text not null check (char_length(email) between 3 and 254),
  role_id integer not null references team_roles (id) on delete restrict check (role_id <> 1),
  token_hash bytea not null unique,
  invited_by bigint references users (id) on delete set null,
  registered_user_id bigint references users (id) on delete cascade,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  created_at timestamptz not null default now()
);
create index team_invitations_email_idx on team_invitations (lower(email)) where accepted_at is null;
comment on column team_invitations.registered_user_id is
  'Set when someone registers with the invitation token; the invitation is accepted when they verify their e-mail.';

create table outbox_events (
  id bigint generated always as identity primary key,
  event_type text not null,
  project_id bigint references projects (id) on delete cascade,
  actor_id bigint references users (id) on delete set null,
  payload jsonb not null default '{}',
  created_at timestamptz not null default now(),
  processed_at timestamptz
);
create index outbox_events_unprocessed_idx on outbox_events (id) where processed_at is null;
comment on table outbox_events is 'Internal events (ProjectUpdated, ProjectLocked, CodeGenerated, …) written in the transaction of the change; consumers mark them processed.';

alter table teams add constraint teams_join_project_id_fkey foreign key (join_project_id) references projects (id) on delete cascade;
alter table jobs add constraint jobs_project_id_fkey foreign key (project_id) references projects (id) on delete set null;
