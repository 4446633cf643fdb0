-- The operator console (issue 14): retrying a failed job needs its payload (graphile-worker
-- drops its own row when a job ends), the statistics read finished jobs by time, worker
-- rows say how many jobs a process runs at once, and every change of a job's status is
-- announced on the administrators' realtime channel.

alter table jobs add column payload jsonb;
comment on column jobs.payload is 'The payload the job was enqueued with, so that an operator can retry a failed job; null for jobs enqueued before 0080.';

-- Throughput and failures of the last hour, and the slowest recent jobs, read by finish time.
create index jobs_finished_at_idx on jobs (finished_at, kind, status) where finished_at is not null;

alter table worker_processes add column concurrency integer;

create function jobs_announce_status() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    perform pg_notify('realtime', json_build_object(
      'channel', 'private-admin.jobs', 'event', 'JobChanged',
      'data', json_build_object('id', new.id, 'kind', new.kind, 'status', new.status))::text);
  end if;
  return null;
end
$$;
comment on function jobs_announce_status() is
  'Sends JobChanged on private-admin.jobs (the operator console) whenever a job is created or changes status, whoever writes it.';

create trigger jobs_announce_status after insert or update of status on jobs
  for each row execute function jobs_announce_status();

-- The console's latest failures.
create index jobs_failed_idx on jobs (finished_at desc) where status = 'failed';
