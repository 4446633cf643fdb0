-- Jobs enqueued in bulk (shared/jobs/enqueueMany.ts: thousands of records in one insert)
-- announce themselves to the operator console once per statement instead of once per row:
-- the console only re-reads its figures on JobChanged, so 10,000 notifications for one
-- fan-out were 10,000 re-read signals and most of the bulk insert's cost. Status changes
-- stay per row (each is its own statement on the worker's path), now filtered by a WHEN
-- clause so that an update leaving the status as it was does not call the function.

create function jobs_announce_added() returns trigger language plpgsql as $$
begin
  perform pg_notify('realtime', json_build_object(
    'channel', 'private-admin.jobs', 'event', 'JobChanged',
    'data', json_build_object('id', a.id, 'kind', a.kind, 'status', a.status, 'count', a.count))::text)
  from (select min(id) as id, kind, status, count(*)::int as count from added group by kind, status) a;
  return null;
end
$$;
comment on function jobs_announce_added() is
  'Sends one JobChanged on private-admin.jobs per kind and status of the jobs one statement created (id: the first of them, count: how many).';

drop trigger jobs_announce_status on jobs;

create trigger jobs_announce_added after insert on jobs
  referencing new table as added
  for each statement execute function jobs_announce_added();

create trigger jobs_announce_status after update of status on jobs
  for each row when (new.status is distinct from old.status) execute function jobs_announce_status();
