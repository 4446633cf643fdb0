-- Automatic translation (issue 19): a schema translation made by the translation provider is
-- marked `machine`; one a person wrote or edited is `human`, and automatic runs never
-- overwrite it.

alter table schema_translations add column source text not null default 'human' check (source in ('human', 'machine'));
comment on column schema_translations.source is 'human: written or edited by a person (kept by automatic runs); machine: from the translation provider.';
