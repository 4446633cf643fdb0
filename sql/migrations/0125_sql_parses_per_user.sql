-- Stand-alone parses are capped per user (the newest ones are kept; see POST /sql-parse): the
-- route deletes a user's older parses with every new one, so it reads them by user.
create index sql_parses_user_idx on sql_parses (user_id, id);
