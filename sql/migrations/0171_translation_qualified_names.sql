-- Labels added before label translations were keyed by the table's qualified name (the
-- 0125 round) were stored under the name the request gave, often the bare table name
-- (`orders` for a table `public.orders`), while the automatic translation and the export key
-- a table by its qualified name: one table could carry two labels per language. This moves
-- each such label to the qualified name when its bare name resolves to exactly one table of
-- its schema's current parse, as POST …/translations resolves a bare name now.
--
-- Left as they are: a bare name several tables share (`items` of `sales` and `stock`: which
-- one was meant is unknown); a name no table of the current parse has; a label whose
-- qualified key is taken by another label a person wrote (two human labels, one is not
-- dropped for the other). A machine label at the qualified key gives way to the human one,
-- as automatic runs never overwrite a label a person wrote.

create temporary table label_moves on commit drop as
select tr.id, tr.schema_id, tr.language, tr.field_name, tr.source, min(q.qualified) as qualified
from schema_translations tr
join schemas s on s.id = tr.schema_id and s.parsed is not null
join lateral (
  select coalesce(nullif(t->>'schema_name', '') || '.', '') || (t->>'table_name') as qualified, t->>'table_name' as bare
  from jsonb_array_elements(s.parsed->'tables') t
) q on q.bare = tr.table_name
where not exists (
  select 1 from jsonb_array_elements(s.parsed->'tables') t
  where coalesce(nullif(t->>'schema_name', '') || '.', '') || (t->>'table_name') = tr.table_name
)
group by tr.id, tr.schema_id, tr.language, tr.field_name, tr.source
having count(distinct q.qualified) = 1;

delete from schema_translations c
using label_moves m
where m.source = 'human' and c.source = 'machine'
  and c.schema_id = m.schema_id and c.language = m.language and c.table_name = m.qualified
  and coalesce(c.field_name, '') = coalesce(m.field_name, '');

update schema_translations tr set table_name = m.qualified
from label_moves m
where tr.id = m.id
  and not exists (
    select 1 from schema_translations c
    where c.schema_id = m.schema_id and c.language = m.language and c.table_name = m.qualified
      and coalesce(c.field_name, '') = coalesce(m.field_name, ''));
