-- The operator console's throughput figures from a roll-up instead of counting the hour's
-- jobs on every read (issue 14, Benchmark: under 100 ms on 1,000,000 records, the slowest
-- reads too). Counting the 50,000 jobs of a busy hour from the finish-time index took
-- 20-40 ms per read and grew with the hour; the roll-up holds at most one row per minute,
-- kind, final status and writing connection, so the hour's figures are a few hundred rows.
--
-- Each connection counts into its own rows (`backend`, its process id), so concurrent
-- completions never wait on one another's counter row and no two transactions lock the
-- same rows in a different order; a row's count may go negative (a job counted by one
-- connection, retried through another), the sum per minute is what counts. Only jobs that
-- finished within the last two hours are counted (the console reads one hour), so deleting
-- old jobs costs nothing here; maintenance__cleanup drops rows older than a day.

create table job_finish_counts (
  minute timestamptz not null,
  kind text not null,
  status text not null check (status in ('succeeded', 'failed')),
  backend integer not null,
  count integer not null,
  primary key (minute, kind, status, backend)
);
comment on table job_finish_counts is
  'Jobs finished (succeeded or failed) per minute of finished_at, kind and status, kept by triggers on jobs; sum over backend.';

insert into job_finish_counts (minute, kind, status, backend, count)
select date_bin('1 minute', finished_at, 'epoch'), kind, status, 0, count(*)
from jobs where status in ('succeeded', 'failed') and finished_at > now() - interval '2 hours'
group by 1, 2, 3;

-- Inserted and deleted jobs: one grouped upsert per statement (bulk inserts and the cleanup's deletes).
create function jobs_count_finished_rows() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into job_finish_counts as c (minute, kind, status, backend, count)
    select date_bin('1 minute', finished_at, 'epoch'), kind, status, pg_backend_pid(), count(*)
    from changed_rows where status in ('succeeded', 'failed') and finished_at > now() - interval '2 hours'
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (minute, kind, status, backend) do update set count = c.count + excluded.count;
  else
    insert into job_finish_counts as c (minute, kind, status, backend, count)
    select date_bin('1 minute', finished_at, 'epoch'), kind, status, pg_backend_pid(), -count(*)
    from changed_rows where status in ('succeeded', 'failed') and finished_at > now() - interval '2 hours'
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (minute, kind, status, backend) do update set count = c.count + excluded.count;
  end if;
  return null;
end
$$;

create trigger jobs_count_finished_insert after insert on jobs
  referencing new table as changed_rows
  for each statement execute function jobs_count_finished_rows();
create trigger jobs_count_finished_delete after delete on jobs
  referencing old table as changed_rows
  for each statement execute function jobs_count_finished_rows();

-- Updated jobs: per row, and only when the job enters or leaves the counted set or moves in it
-- (the WHEN clause keeps progress updates and the `running` transition from calling it).
create function jobs_count_finished_update() returns trigger language plpgsql as $$
begin
  if old.status in ('succeeded', 'failed') and old.finished_at > now() - interval '2 hours' then
    insert into job_finish_counts as c (minute, kind, status, backend, count)
    values (date_bin('1 minute', old.finished_at, 'epoch'), old.kind, old.status, pg_backend_pid(), -1)
    on conflict (minute, kind, status, backend) do update set count = c.count - 1;
  end if;
  if new.status in ('succeeded', 'failed') and new.finished_at > now() - interval '2 hours' then
    insert into job_finish_counts as c (minute, kind, status, backend, count)
    values (date_bin('1 minute', new.finished_at, 'epoch'), new.kind, new.status, pg_backend_pid(), 1)
    on conflict (minute, kind, status, backend) do update set count = c.count + 1;
  end if;
  return null;
end
$$;

create trigger jobs_count_finished_update after update on jobs
  for each row
  when ((old.status in ('succeeded', 'failed') and old.finished_at is not null
         or new.status in ('succeeded', 'failed') and new.finished_at is not null)
        and (old.status, old.finished_at, old.kind) is distinct from (new.status, new.finished_at, new.kind))
  execute function jobs_count_finished_update();

-- The slowest jobs of the hour: the ten longest of each minute straight from this index
-- (sixty short descents), instead of sorting every job of the hour by its duration.
create index jobs_finished_minute_took_idx on jobs (date_bin('1 minute', finished_at, 'epoch'), (finished_at - started_at) desc)
  include (id, finished_at, started_at) where finished_at is not null and started_at is not null;
