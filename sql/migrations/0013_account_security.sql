-- Account security (security review): a changed e-mail address stays pending until the link
-- mailed to it is used, while the old address keeps signing in and can cancel the change;
-- e-mail links are single-use.

create table email_changes (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  old_email text not null check (char_length(old_email) between 3 and 254),
  new_email text not null check (char_length(new_email) between 3 and 254),
  cancel_token_hash bytea not null unique,
  cancel_expires_at timestamptz not null,
  confirmed_at timestamptz,
  cancelled_at timestamptz,
  created_at timestamptz not null default now()
);
create index email_changes_user_id_idx on email_changes (user_id);
comment on table email_changes is
  'Requested e-mail changes: pending until confirmed from the link sent to new_email; the old address may cancel '
  '(and sign every session out) until cancel_expires_at, also after the confirmation.';

create table used_email_links (
  link_hash bytea primary key,
  user_id bigint not null references users (id) on delete cascade,
  expires_at timestamptz not null,
  used_at timestamptz not null default now()
);
create index used_email_links_expires_at_idx on used_email_links (expires_at);
comment on table used_email_links is
  'Signed e-mail verification links already used (SHA-256 of their signature), so each works once; kept until the link would have expired.';
