-- Stored files that no row references (a crash between storing an upload's file and
-- committing its row) were never removed. The media sweep now removes files without expiry
-- older than a day that no row names (shared/storage/orphans.ts); these indexes let it ask
-- each referencing column by key, and walk the candidates in id order.
create index stored_files_unexpired_idx on stored_files (id) where expires_at is null;
create index template_media_storage_key_idx on template_media (storage_key) where storage_key is not null;
create index store_template_media_storage_key_idx on store_template_media (storage_key) where storage_key is not null;
create index project_report_images_storage_key_idx on project_report_images (storage_key);
create index seller_payouts_sepa_storage_key_idx on seller_payouts (sepa_storage_key) where sepa_storage_key is not null;
create index project_archives_file_path_idx on project_archives (file_path) where file_path is not null;
