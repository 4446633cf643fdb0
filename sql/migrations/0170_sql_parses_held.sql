-- A stand-alone parse is held for the request that made it (POST /sql-parse): the route keeps
-- a user's newest parses only, and a burst of more parses than that at one moment dropped the
-- oldest of the burst while its request still waited for it (404). A held parse is never
-- dropped for being old; its request lets go of it once read, and the hold ends by itself
-- after the longest the request may wait (a web process that stopped meanwhile never reads it).
alter table sql_parses add column held_until timestamptz;
comment on column sql_parses.held_until is
  'Until when the request that made the parse may still read it; set on insert, cleared when read. Not dropped for the per-user cap while in the future.';
