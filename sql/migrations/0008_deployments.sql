-- Deployment environments (FTP, SSH or git targets per project), deployments with their
-- logs and resumable deployer state, and outbound webhooks with their delivery log.
-- Secrets never sit in the jsonb configs: each has its own sealed bytea column
-- (AES-256-GCM under APP_KEY, shared/crypto.ts).

create table environments (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  type text not null check (type in ('development', 'staging', 'production')),
  is_default boolean not null default false,
  ftp_config jsonb check (ftp_config is null or jsonb_typeof(ftp_config) = 'object'),
  ssh_config jsonb check (ssh_config is null or jsonb_typeof(ssh_config) = 'object'),
  git_config jsonb check (git_config is null or jsonb_typeof(git_config) = 'object'),
  ftp_password_sealed bytea,
  ssh_password_sealed bytea,
  ssh_private_key_sealed bytea,
  git_access_token_sealed bytea,
  git_app_password_sealed bytea,
  ssh_host_key_fingerprint text check (char_length(ssh_host_key_fingerprint) <= 200),
  ssh_host_key_pinned_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index environments_project_id_idx on environments (project_id, id);
create unique index environments_one_default_key on environments (project_id) where is_default;
comment on table environments is
  'Deployment targets of a project. The *_config columns hold the spec''s config fields without their secrets.';
comment on column environments.ssh_host_key_fingerprint is
  'SSH host key (SHA256:…) pinned on the first successful deployment; later connections must present it.';

create table deployments (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  environment_id bigint references environments (id) on delete set null,
  code_generation_id bigint references code_generations (id) on delete set null,
  deployment_method text not null check (deployment_method in ('ftp', 'ssh', 'git')),
  target_environment text not null check (target_environment in ('development', 'staging', 'production')),
  status text not null default 'pending'
    check (status in ('pending', 'running', 'succeeded', 'failed', 'rolled_back')),
  rollback_of bigint references deployments (id) on delete set null,
  rollback_to bigint references deployments (id) on delete set null,
  rolled_back_by bigint references deployments (id) on delete set null,
  job_id bigint references jobs (id) on delete set null,
  attempts integer not null default 0 check (attempts >= 0),
  state jsonb not null default '{}' check (jsonb_typeof(state) = 'object'),
  result jsonb,
  error text,
  error_code text,
  user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz not null default now()
);
create index deployments_project_id_idx on deployments (project_id, id desc);
create index deployments_environment_id_idx on deployments (environment_id, id desc) where environment_id is not null;
create index deployments_code_generation_id_idx on deployments (code_generation_id) where code_generation_id is not null;
comment on column deployments.state is
  'Deployer steps finished by earlier attempts (string key/value), so a retry never repeats a side effect.';
comment on column deployments.rollback_of is 'The deployment this rollback supersedes (it becomes rolled_back when this one succeeds).';
comment on column deployments.rollback_to is 'The earlier successful deployment whose generation this rollback redeploys.';
comment on column deployments.rolled_back_by is 'The rollback deployment that superseded this one.';

create table deployment_logs (
  id bigint generated always as identity primary key,
  deployment_id bigint not null references deployments (id) on delete cascade,
  type text not null check (type in ('info', 'success', 'warning', 'error')),
  message text not null,
  metadata jsonb,
  task_id text,
  created_at timestamptz not null default now()
);
create index deployment_logs_deployment_id_idx on deployment_logs (deployment_id, id);
comment on column deployment_logs.task_id is 'The job (jobs.id, as text) whose run wrote the entry.';

create table webhooks (
  id bigint generated always as identity primary key,
  project_id bigint not null references projects (id) on delete cascade,
  event_type text not null check (event_type in ('code_generated', 'manual_trigger', 'scheduled')),
  target_url text not null check (char_length(target_url) between 1 and 2048),
  secret_key_sealed bytea not null,
  is_active boolean not null default true,
  cron text check (char_length(cron) <= 255),
  timezone text not null default 'UTC' check (char_length(timezone) <= 64),
  consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
  deactivated_at timestamptz,
  last_scheduled_at timestamptz,
  user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (event_type <> 'scheduled' or cron is not null)
);
create index webhooks_project_id_idx on webhooks (project_id, id);
create index webhooks_active_event_idx on webhooks (event_type, project_id) where is_active;
comment on column webhooks.cron is 'Five-field cron expression of a scheduled webhook, evaluated every minute in its timezone.';
comment on column webhooks.consecutive_failures is
  'Failed deliveries (all attempts exhausted) since the last success; the webhook deactivates at the configured limit.';

create table webhook_deliveries (
  id bigint generated always as identity primary key,
  webhook_id bigint not null references webhooks (id) on delete cascade,
  event text not null check (event in ('code_generated', 'manual_trigger', 'scheduled')),
  source_key text not null check (char_length(source_key) between 1 and 255),
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'delivering', 'succeeded', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  response_status integer,
  error text,
  job_id bigint references jobs (id) on delete set null,
  created_at timestamptz not null default now(),
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  finished_at timestamptz,
  unique (webhook_id, source_key)
);
create index webhook_deliveries_webhook_id_idx on webhook_deliveries (webhook_id, id desc);
comment on column webhook_deliveries.source_key is
  'What caused the delivery (outbox:<event id>, manual:<uuid>, scheduled:<minute>); unique per webhook so replays never deliver twice.';

-- A recorded CodeGenerated event kicks the webhook dispatcher in the same transaction: one
-- graphile-worker job under a fixed key, so a burst of events queues a single run (a run in
-- progress gets one successor). The per-minute cron tick of the same task catches anything
-- else. Done here rather than in application code so every writer of the event is covered.
create function outbox_events_kick_webhooks() returns trigger language plpgsql as $$
begin
  perform graphile_worker.add_job('webhooks__dispatch', '{}'::json, job_key => 'webhooks__dispatch', max_attempts => 5);
  return null;
end
$$;
create trigger outbox_events_kick_webhooks after insert on outbox_events
  for each row when (new.event_type = 'CodeGenerated') execute function outbox_events_kick_webhooks();
