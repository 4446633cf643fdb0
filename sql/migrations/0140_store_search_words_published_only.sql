-- The search dictionary holds the words of published templates only. The triggers of 0042 added
-- every word of every store template, drafts and templates under review included: a seller's
-- unpublished words became "did you mean" candidates for everybody's queries, and a misspelt
-- draft word counted as known, so a query with that misspelling was no longer corrected to the
-- published word ("dashbord" found nothing while a draft said "Dashbord").
--
-- Words now come in when a template is published (or a published one's text changes) and go
-- when no published template holds them any more (a template withdrawn, sent back to review or
-- edited). Two transactions racing on the same word may leave it out until the next write of a
-- template holding it; a word missing from the dictionary still finds itself (it is only not
-- offered as a correction), so the race costs a correction, never a result.

-- The one-lexeme query of a dictionary word, taken as it is (not parsed into words again):
-- quoted, with quotes and backslashes doubled as tsquery input wants them.
create function store_search_lexeme(word text) returns tsquery language sql immutable strict as $$
  select ('''' || replace(replace(word, '\', '\\'), '''', '''''') || '''')::tsquery
$$;

delete from store_search_words w
where not exists (
  select from store_templates st
  where st.status = 'published' and st.search_vector @@ store_search_lexeme(w.word)
);

create or replace function store_search_words_add_inserted() returns trigger language plpgsql as $$
begin
  insert into store_search_words (word)
  select distinct word from inserted, unnest(tsvector_to_array(inserted.search_vector)) as word
  where inserted.status = 'published'
  on conflict do nothing;
  return null;
end $$;

-- Removes `words` that no published template holds any more (the partial search index answers
-- each lookup).
create function store_search_words_forget(words text[]) returns void language sql as $$
  delete from store_search_words w
  where w.word = any(words)
    and not exists (
      select from store_templates st
      where st.status = 'published' and st.search_vector @@ store_search_lexeme(w.word)
    );
$$;

create or replace function store_search_words_add_updated() returns trigger language plpgsql as $$
declare
  kept text[] := case when new.status = 'published' then tsvector_to_array(new.search_vector) else '{}' end;
begin
  if new.status = 'published' then
    insert into store_search_words (word) select distinct word from unnest(kept) as word on conflict do nothing;
  end if;
  if old.status = 'published' then
    perform store_search_words_forget(array(select unnest(tsvector_to_array(old.search_vector)) except select unnest(kept)));
  end if;
  return null;
end $$;

create function store_search_words_forget_deleted() returns trigger language plpgsql as $$
begin
  perform store_search_words_forget(array(
    select distinct word from deleted, unnest(tsvector_to_array(deleted.search_vector)) as word where deleted.status = 'published'));
  return null;
end $$;

drop trigger store_search_words_on_update on store_templates;
create trigger store_search_words_on_update after update of name, description, status on store_templates
  for each row when (old.name is distinct from new.name or old.description is distinct from new.description or old.status is distinct from new.status)
  execute function store_search_words_add_updated();
create trigger store_search_words_on_delete after delete on store_templates
  referencing old table as deleted for each statement execute function store_search_words_forget_deleted();

comment on table store_search_words is 'Distinct lexemes of the search_vector of published store_templates (kept by triggers, 0140).';
