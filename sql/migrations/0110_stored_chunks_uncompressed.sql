-- Storage chunks are kept out of line without PostgreSQL's own compression (issue 21, the
-- archive build path). What storage holds is mostly compressed already (zips, images, media),
-- and for such a 1 MiB chunk pglz works through most of it before giving up: storing a 5.7 MB
-- zip took 200-260 ms of server CPU (815-1,070 ms in all) with it and 70-120 ms (440-810 ms)
-- without, measured in alternating runs. Chunks written before keep their form; reads of both
-- work alike.
alter table stored_file_chunks alter column data set storage external;
