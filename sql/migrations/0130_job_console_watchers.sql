-- The operator console's JobChanged notifications only while an operator watches (issue 21,
-- docs/perf/README.md "Jobs, a seventh look"). Every job sent three of them (inserted,
-- running, finished), each waking every listening backend, whether or not a console was open.
--
-- Each web process with a `private-admin.jobs` subscriber holds a shared session advisory lock
-- on key 7320151021 on its LISTEN connection (shared/events/listener.ts), taken before the
-- subscriber hears `subscription_succeeded`, given up with its last subscriber and gone with
-- the connection. The triggers ask for the same key exclusively, for their transaction:
-- - refused: someone holds it shared (a watcher), waits for it (a watcher arriving) or holds
--   it exclusively (another job transaction, a needless but harmless notification): notify;
-- - granted: nobody watches, so no notification; the key is then held until this transaction
--   ends, so a watcher arriving meanwhile waits for its commit and the console's first read
--   after `subscription_succeeded` sees this change. No change falls between the two.
-- Losing the LISTEN connection loses the lock, and the web process tells its subscribers
-- (EventsMissed) after it has listened and locked again.

create function jobs_console_watched() returns boolean language sql volatile as $$
  select not pg_try_advisory_xact_lock(7320151021)
$$;
comment on function jobs_console_watched() is
  'Whether an operator console may be listening for JobChanged (key 7320151021 held or awaited by another session); when not, holds the key until the transaction ends.';

create or replace function jobs_announce_added() returns trigger language plpgsql as $$
begin
  if not jobs_console_watched() then
    return null;
  end if;
  perform pg_notify('realtime', json_build_object(
    'channel', 'private-admin.jobs', 'event', 'JobChanged',
    'data', json_build_object('id', a.id, 'kind', a.kind, 'status', a.status, 'count', a.count))::text)
  from (select min(id) as id, kind, status, count(*)::int as count from added group by kind, status) a;
  return null;
end
$$;
comment on function jobs_announce_added() is
  'Sends one JobChanged on private-admin.jobs per kind and status of the jobs one statement created (id: the first of them, count: how many), while a console watches (jobs_console_watched).';

create or replace function jobs_announce_status() returns trigger language plpgsql as $$
begin
  if not jobs_console_watched() then
    return null;
  end if;
  perform pg_notify('realtime', json_build_object(
    'channel', 'private-admin.jobs', 'event', 'JobChanged',
    'data', json_build_object('id', new.id, 'kind', new.kind, 'status', new.status))::text);
  return null;
end
$$;
comment on function jobs_announce_status() is
  'Sends JobChanged on private-admin.jobs when a job changes status (the trigger''s WHEN clause), whoever writes it, while a console watches (jobs_console_watched).';
