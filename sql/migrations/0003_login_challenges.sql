-- Second-factor challenges count wrong codes: after five the challenge is spent and the
-- user must log in again, so a two_factor_token cannot be used to guess codes.
alter table two_factor_challenges add column attempts integer not null default 0;
