-- A seller who sold store templates can close their account, and the buyers keep what they
-- bought. Deleting such a seller cascaded to their store templates, which purchases
-- reference with `on delete restrict`: the deletion failed with a restrict violation, a
-- 500 to the seller (DELETE /profile) and to administrators (DELETE /admin/users/{id}).
-- Now, before the seller's row goes, their templates nobody bought or is paying for are
-- deleted and the others withdrawn (hidden from the store, still delivered to their buyers);
-- the withdrawn ones keep their rows with no seller.
alter table store_templates alter column seller_id drop not null;
alter table store_templates drop constraint store_templates_seller_id_fkey;
alter table store_templates add constraint store_templates_seller_id_fkey
  foreign key (seller_id) references users (id) on delete set null;
comment on column store_templates.seller_id is 'The seller; null once their account is closed (the template is then withdrawn and kept for its buyers).';

create function store_templates_close_seller() returns trigger language plpgsql as $$
begin
  delete from store_templates st where st.seller_id = old.id
    and not exists (select from store_purchases p where p.store_template_id = st.id)
    and not exists (select from store_payment_intents i where i.store_template_id = st.id);
  update store_templates set status = 'withdrawn', updated_at = now() where seller_id = old.id and status <> 'withdrawn';
  return old;
end
$$;
create trigger store_templates_close_seller before delete on users
  for each row execute function store_templates_close_seller();
