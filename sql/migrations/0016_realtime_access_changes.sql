-- Open realtime subscriptions are re-authorized when access changes (security review
-- finding 14): every change that can end someone's right to a private channel NOTIFYs
-- `realtime_access`, with `user:<id>` when it concerns one account and `*` when it may
-- concern anyone (a project's owner, sharing or deletion). Web processes hold back the
-- affected subscriptions' events, re-check them and end those that lost access. Triggers,
-- not calls in each route, so that no path (route, administrator, CLI, SQL) is missed.

create function realtime_access_announce_user() returns trigger
language plpgsql as $$
begin
  perform pg_notify('realtime_access', 'user:' || (case when tg_op = 'INSERT' then new else old end).user_id);
  return null;
end $$;
comment on function realtime_access_announce_user is
  'NOTIFY realtime_access with user:<id> of the row (its user may have lost access to realtime channels).';

-- users.disabled_at comes with a later migration (0060), so the comparison lives in the
-- function body (resolved when it runs) rather than in the trigger's WHEN clause.
create function realtime_access_announce_account() returns trigger
language plpgsql as $$
begin
  if tg_op = 'DELETE'
    or to_jsonb(old) -> 'disabled_at' is distinct from to_jsonb(new) -> 'disabled_at'
    or old.tokens_revoked_at is distinct from new.tokens_revoked_at then
    perform pg_notify('realtime_access', 'user:' || old.id);
  end if;
  return null;
end $$;
comment on function realtime_access_announce_account is
  'NOTIFY realtime_access with user:<id> when an account is disabled, deleted or has its tokens revoked.';

create function realtime_access_announce_all() returns trigger
language plpgsql as $$
begin
  perform pg_notify('realtime_access', '*');
  return null;
end $$;
comment on function realtime_access_announce_all is
  'NOTIFY realtime_access with * (re-check every subscription) when a change may concern anyone.';

create function realtime_access_announce_grant() returns trigger
language plpgsql as $$
begin
  if old.model = 'Grant' and old.account_id is not null then
    perform pg_notify('realtime_access', 'user:' || old.account_id);
  end if;
  return null;
end $$;
comment on function realtime_access_announce_grant is
  'NOTIFY realtime_access with user:<id> when an OAuth grant goes (its access tokens end with it).';

create trigger realtime_access_users
after update or delete on users
for each row execute function realtime_access_announce_account();

create trigger realtime_access_user_roles
after delete or update on user_roles
for each row execute function realtime_access_announce_user();

create trigger realtime_access_team_members
after update on team_members
for each row when (old.role_id is distinct from new.role_id or old.team_id is distinct from new.team_id or old.user_id is distinct from new.user_id)
execute function realtime_access_announce_user();

create trigger realtime_access_team_members_deleted
after delete on team_members
for each row execute function realtime_access_announce_user();

create trigger realtime_access_personal_tokens
after delete or update of abilities, expires_at on personal_access_tokens
for each row execute function realtime_access_announce_user();

create trigger realtime_access_revoked_tokens
after insert on revoked_access_tokens
for each row execute function realtime_access_announce_user();

create trigger realtime_access_oauth_grants
after delete on oauth_models
for each row when (old.model = 'Grant')
execute function realtime_access_announce_grant();

create trigger realtime_access_team_projects
after delete or update on team_projects
for each statement execute function realtime_access_announce_all();

create trigger realtime_access_projects
after update on projects
for each row when (old.owner_id is distinct from new.owner_id or old.is_public is distinct from new.is_public or old.deleted_at is distinct from new.deleted_at)
execute function realtime_access_announce_all();

create trigger realtime_access_projects_deleted
after delete on projects
for each statement execute function realtime_access_announce_all();
