-- Files attached to support-ticket messages (issue 19 item 5): a third kind of attachment
-- owner beside kanban comments and messages. An attachment of an internal note is as hidden
-- from the ticket's user as the note; deleting a ticket removes its files (the delete
-- trigger of migration 0030 leaves their keys for the media sweep).
alter table attachments add column support_message_id bigint references support_ticket_messages (id) on delete cascade;
alter table attachments drop constraint attachments_check;
alter table attachments add constraint attachments_one_owner check (num_nonnulls(comment_id, message_id, support_message_id) = 1);
create index attachments_support_message_id_idx on attachments (support_message_id) where support_message_id is not null;
comment on column attachments.support_message_id is 'The support-ticket message carrying the file (shown only to whoever may read that message).';
