-- Personal API tokens need the developer role (spec: `developer` adds API key management;
-- `super_admin` holds every permission). Removing the role now deletes the account's tokens
-- (shared/admin/userAdministration.ts); tokens of accounts that lost it before then still
-- worked, and go here.

delete from personal_access_tokens t
where not exists (
  select 1 from user_roles r where r.user_id = t.user_id and r.role in ('developer', 'super_admin')
);
