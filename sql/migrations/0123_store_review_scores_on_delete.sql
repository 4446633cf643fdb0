-- A store template's review_count and review_score follow deleted reviews. Reviews go with
-- their reviewer's account (on delete cascade), but the count and mean were only written
-- when a review was added: a closed account's rating kept counting in the score, the sort by
-- rating and the count, while the review itself was gone from the list.
create function store_reviews_refresh_scores() returns trigger language plpgsql as $$
begin
  update store_templates st set
    review_count = (select count(*)::int from store_reviews r where r.store_template_id = st.id),
    review_score = (select round(avg(r.rating), 2) from store_reviews r where r.store_template_id = st.id)
  where st.id in (select distinct store_template_id from removed);
  return null;
end
$$;
create trigger store_reviews_refresh_scores after delete on store_reviews
  referencing old table as removed for each statement execute function store_reviews_refresh_scores();
