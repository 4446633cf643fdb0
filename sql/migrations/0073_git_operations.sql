-- Commit and push without a pull request are deployments of their own kind: they run as the
-- deployments__run job and log, announce and retry exactly as deployments do. `operation`
-- tells them apart; the git target (provider, repository, branch, message) is kept beside
-- the environment or the user's git connection that gives access to it. A commit through a
-- connection has no environment, hence no target environment type.

alter table deployments
  add column operation text not null default 'deploy' check (operation in ('deploy', 'commit', 'push')),
  add column git_connection_id bigint references git_connections (id) on delete set null,
  add column git_target jsonb check (git_target is null or jsonb_typeof(git_target) = 'object'),
  alter column target_environment drop not null,
  add constraint deployments_operation_target_check check (operation = 'deploy' or git_target is not null),
  add constraint deployments_deploy_environment_check check (operation <> 'deploy' or target_environment is not null);
create index deployments_git_commits_idx on deployments (code_generation_id, id desc) where operation = 'commit' and status = 'succeeded';
comment on column deployments.operation is 'deploy (FTP, SSH, or git with a pull request), commit (one commit on a branch) or push (a generation''s commit to another branch).';
comment on column deployments.git_target is 'Commit and push: {provider, repository, branch, message?, commit?}.';
