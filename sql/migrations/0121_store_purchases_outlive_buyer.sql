-- A store purchase outlives its buyer's account. The purchase was deleted with the buyer
-- (on delete cascade), and with it the seller's earning (seller_earnings.purchase_id
-- cascades): a buyer closing their account took a pending earning out of the seller's next
-- payout and the sale out of their analytics. The purchase now keeps its row with no buyer.
alter table store_purchases alter column buyer_id drop not null;
alter table store_purchases drop constraint store_purchases_buyer_id_fkey;
alter table store_purchases add constraint store_purchases_buyer_id_fkey
  foreign key (buyer_id) references users (id) on delete set null;
comment on column store_purchases.buyer_id is 'The buyer; null once their account is closed (the sale and the seller''s earning stay).';
