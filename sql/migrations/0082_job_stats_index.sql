-- The operator console's figures over a large jobs table (issue 14, Benchmark: under 100 ms
-- on 1,000,000 records). The last hour's throughput and its slowest jobs are read from this
-- index alone (an index-only scan): finish time, kind and status as before, now with the
-- start time and the id carried along, so neither read visits the table for the tens of
-- thousands of jobs a busy hour finishes; the slowest ten are then fetched by id.
create index jobs_finished_stats_idx on jobs (finished_at, kind, status) include (started_at, id) where finished_at is not null;
drop index jobs_finished_at_idx;
