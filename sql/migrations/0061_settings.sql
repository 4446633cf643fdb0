-- Settings (issue 19): the service's global settings in one row, read by every process
-- through a cache that a NOTIFY on settings:changed invalidates; and each user's
-- notification choices per kind and channel (language and theme stay on users).

create table global_settings (
  id boolean primary key default true check (id),
  registration_open boolean not null default true,
  maintenance_enabled boolean not null default false,
  maintenance_message text check (char_length(maintenance_message) <= 1000),
  maintenance_retry_after_s integer not null default 300 check (maintenance_retry_after_s between 1 and 86400),
  default_language text not null default 'en' check (default_language in ('en', 'de')),
  upload_limit_bytes bigint check (upload_limit_bytes > 0),
  payout_minimum_cents integer check (payout_minimum_cents >= 0),
  updated_by bigint references users (id) on delete set null,
  updated_at timestamptz not null default now()
);
comment on table global_settings is 'The one row of settings administrators change at run time (PUT /admin/settings).';
comment on column global_settings.upload_limit_bytes is 'Upload limit below the configured ceiling UPLOAD_LIMIT_BYTES; null uses the ceiling.';
comment on column global_settings.payout_minimum_cents is 'Smallest payout a seller may request; null uses PAYOUT_MINIMUM_EUR.';
insert into global_settings default values;

create function global_settings_announce() returns trigger language plpgsql as $$
begin
  perform pg_notify('settings:changed', '');
  return null;
end
$$;
comment on function global_settings_announce() is
  'Tells every process that the global settings changed, whoever wrote them, so their caches re-read.';
create trigger global_settings_announce after insert or update or delete on global_settings
  for each statement execute function global_settings_announce();

create table user_settings (
  user_id bigint primary key references users (id) on delete cascade,
  notifications jsonb not null default '{}' check (jsonb_typeof(notifications) = 'object'),
  updated_at timestamptz not null default now()
);
comment on column user_settings.notifications is
  'Per kind {email, push} booleans the user chose; a kind or channel not listed uses the default (on).';
