-- Template media: images (checked and re-encoded, kept in storage) and linked videos of a
-- template, served publicly. Storage files outlive their rows only until the media sweep:
-- every deleted row, whatever deleted it (the media route, a template or account deletion
-- cascading), leaves its storage key in media_garbage in the same transaction.

create table template_media (
  id bigint generated always as identity primary key,
  template_id bigint not null references templates (id) on delete cascade,
  media_type text not null check (media_type in ('logo', 'image', 'video')),
  title text check (char_length(title) <= 255),
  storage_key text check (char_length(storage_key) between 1 and 1024),
  content_type text check (content_type in ('image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif')),
  byte_size integer check (byte_size >= 0),
  width integer check (width > 0),
  height integer check (height > 0),
  sha256 text check (sha256 ~ '^[0-9a-f]{64}$'),
  video_url text check (char_length(video_url) between 1 and 2048),
  user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  check ((media_type = 'video') = (video_url is not null)),
  check ((media_type = 'video') = (storage_key is null)),
  check (storage_key is null or (content_type is not null and byte_size is not null and width is not null and height is not null and sha256 is not null))
);
create index template_media_template_id_idx on template_media (template_id, id);
create unique index template_media_one_logo_key on template_media (template_id) where media_type = 'logo';
comment on table template_media is 'Images and linked videos of a template (spec "Template media"); GET /template-media/{id} serves images publicly.';
comment on column template_media.storage_key is 'Storage key of the re-encoded image (shared/storage); null for a linked video.';
comment on column template_media.sha256 is 'Hex SHA-256 of the stored bytes, served as the strong ETag.';

create table media_garbage (
  storage_key text primary key check (char_length(storage_key) between 1 and 1024),
  created_at timestamptz not null default now()
);
comment on table media_garbage is 'Storage keys of deleted media rows, removed from storage by the media__sweep job.';

create function template_media_collect_garbage() returns trigger language plpgsql as $$
begin
  if old.storage_key is not null then
    insert into media_garbage (storage_key) values (old.storage_key) on conflict do nothing;
  end if;
  return null;
end
$$;
create trigger template_media_collect_garbage after delete on template_media
  for each row execute function template_media_collect_garbage();
