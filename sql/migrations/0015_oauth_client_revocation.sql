-- Web processes cache the ids of active OAuth clients (token audiences); revoking or deleting
-- a client announces it, so every process drops it at once instead of at its next restart.

create function oauth_clients_announce_change() returns trigger
language plpgsql as $$
begin
  perform pg_notify('oauth_clients', case when tg_op = 'DELETE' then old.client_id else new.client_id end);
  return null;
end $$;

create trigger oauth_clients_announce_change
after update of revoked_at or delete on oauth_clients
for each row execute function oauth_clients_announce_change();
comment on function oauth_clients_announce_change is
  'NOTIFY oauth_clients with the client id when a client is revoked, restored or deleted (web processes evict it from their cache).';
