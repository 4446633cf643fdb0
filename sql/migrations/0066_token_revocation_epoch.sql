-- Bearer authentication reads the user's row on every request (tokens_revoked_at, disabled_at
-- and roles stay exact). Whether an access token was revoked by /logout, or the OAuth grant it
-- came from is gone, took two more index probes on every request; a web process now remembers
-- a token that passed those checks, together with its user's token_epoch. Every revocation of
-- one of the user's access tokens and every deletion of one of their grants bumps the epoch
-- in the same transaction, so the row read on the next request tells each process, exactly
-- and without waiting for a notification, that what it remembers no longer holds.

alter table users add column token_epoch bigint not null default 0;
comment on column users.token_epoch is
  'Bumped when one of the user''s access tokens is revoked or one of their OAuth grants is deleted; web processes re-check cached tokens when it moves.';

create function users_bump_token_epoch() returns trigger
language plpgsql as $$
begin
  if tg_table_name = 'revoked_access_tokens' then
    update users set token_epoch = token_epoch + 1 where id = new.user_id;
  elsif old.account_id ~ '^[0-9]{1,18}$' then
    update users set token_epoch = token_epoch + 1 where id = old.account_id::bigint;
  end if;
  return null;
end $$;
comment on function users_bump_token_epoch is
  'Moves users.token_epoch when an access token of the user is revoked or one of their grants is deleted.';

create trigger revoked_access_tokens_bump_epoch
after insert on revoked_access_tokens
for each row execute function users_bump_token_epoch();

create trigger oauth_grants_bump_epoch
after delete on oauth_models
for each row when (old.model = 'Grant') execute function users_bump_token_epoch();
