-- Personal API tokens may expire: maintenance__cleanup deletes them a while after their
-- expiry, and this index lets it find them without reading the whole table. A two-factor
-- challenge remembers the browser its login named, so trusting the device at the second
-- step records the same browser the next login will compare.

create index personal_access_tokens_expires_at_idx on personal_access_tokens (expires_at) where expires_at is not null;

alter table two_factor_challenges add column browser text check (char_length(browser) <= 255);
comment on column two_factor_challenges.browser is
  'The browser named at POST /auth/login; trusting the device at /auth/login-2fa records it unless that request names one.';
