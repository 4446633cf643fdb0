-- A git connection remembers the REST API base its tokens were first used with (GitHub and
-- Bitbucket configure it apart from the OAuth base), so a later change of GITHUB_API_BASE or
-- BITBUCKET_API_BASE does not send the tokens to another host. Null for connections made
-- before this column: only their instance_url is compared.
alter table git_connections add column api_base text check (char_length(api_base) between 1 and 2048);
comment on column git_connections.api_base is 'The REST API base the connection was made with; its tokens are not sent to another one.';
