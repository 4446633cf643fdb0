-- A report image deleted by a cascade (its report deleted with its schema, or with a
-- project or account removed for good) left its stored file behind: only the report routes
-- deleted files, after their own deletes. Like other media, a deleted row now lists its
-- storage key for the media sweep, in the deleting transaction.
create function project_report_images_collect_garbage() returns trigger language plpgsql as $$
begin
  insert into media_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  return null;
end
$$;
create trigger project_report_images_collect_garbage after delete on project_report_images
  for each row execute function project_report_images_collect_garbage();
comment on function project_report_images_collect_garbage() is 'A deleted report image (also by a cascade from its report, schema or project) leaves its storage key for the media sweep.';
