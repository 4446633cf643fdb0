-- Typo-tolerant store search through a dictionary: every distinct word of the store's names and
-- descriptions, trigram-indexed. A query word is corrected to the dictionary words most similar
-- to it, and the corrected query runs on the full-text index; matching the whole query by
-- trigram similarity against every template's name (0040) read a large part of the table.

create table store_search_words (
  word text primary key
);
create index store_search_words_trgm_idx on store_search_words using gist (word gist_trgm_ops);
comment on table store_search_words is 'Distinct lexemes of store_templates.search_vector (kept by triggers; a word no longer used only finds nothing).';

insert into store_search_words (word)
select distinct word from store_templates, unnest(tsvector_to_array(search_vector)) as word
on conflict do nothing;

create function store_search_words_add_inserted() returns trigger language plpgsql as $$
begin
  insert into store_search_words (word)
  select distinct word from inserted, unnest(tsvector_to_array(inserted.search_vector)) as word
  on conflict do nothing;
  return null;
end $$;

create function store_search_words_add_updated() returns trigger language plpgsql as $$
begin
  insert into store_search_words (word)
  select distinct word from unnest(tsvector_to_array(new.search_vector)) as word
  on conflict do nothing;
  return null;
end $$;

-- Statement level for inserts (a bulk insert collects its words once); row level for edits of the
-- searched text only, since sales and review counters update the table far more often.
create trigger store_search_words_on_insert after insert on store_templates
  referencing new table as inserted for each statement execute function store_search_words_add_inserted();
create trigger store_search_words_on_update after update of name, description on store_templates
  for each row when (old.name is distinct from new.name or old.description is distinct from new.description)
  execute function store_search_words_add_updated();

-- OR and AND over many tsqueries (tsquery_or and tsquery_and are the `||` and `&&` operators).
create aggregate tsquery_or_agg (tsquery) (sfunc = tsquery_or, stype = tsquery);
create aggregate tsquery_and_agg (tsquery) (sfunc = tsquery_and, stype = tsquery);

-- The full-text index is read on every search and written only when a template's text changes:
-- without the pending list, a search never scans entries not yet merged into the index (a bulk
-- import otherwise leaves up to 4 MB of them for every search to read until vacuum runs).
alter index store_templates_search_idx set (fastupdate = off);
select gin_clean_pending_list('store_templates_search_idx'::regclass);
