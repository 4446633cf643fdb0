-- A version per kanban board, bumped in the same transaction by every write that changes what
-- the board read returns (the board itself, its columns, cards, labels, card labels and
-- assignees, comment counts, and the name/initials/colour of a person assigned to a card).
-- Readers compare it with the version of a cached answer (api/routes/kanban/boardCache.ts)
-- and send it as the ETag. Triggers, so no write path can forget it; statement-level ones on
-- the card tables, so a move that shifts 200 positions bumps the board once, not 200 times.
-- Every kanban write locks the board row first (shared/kanban/store.ts lockBoard), so the
-- bump adds no new lock wait or lock order.

alter table kanban_boards add column version bigint not null default 0;
comment on column kanban_boards.version is 'Bumped by triggers on every change to what the board read shows; the board answer cache key and ETag.';

-- Any update of the board row (a rename) bumps it, unless the update is the bump itself.
create function kanban_boards_bump_self() returns trigger language plpgsql as $$
begin
  if new.version = old.version then
    new.version := old.version + 1;
  end if;
  return new;
end
$$;
create trigger kanban_boards_bump_self before update on kanban_boards
  for each row execute function kanban_boards_bump_self();

-- Tables with a board_id: the boards of the old and new rows of the statement.
create function kanban_bump_boards_of_rows() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    update kanban_boards set version = version + 1 where id in (select distinct board_id from new_rows);
  elsif tg_op = 'DELETE' then
    update kanban_boards set version = version + 1 where id in (select distinct board_id from old_rows);
  else
    update kanban_boards set version = version + 1
    where id in (select board_id from new_rows union select board_id from old_rows);
  end if;
  return null;
end
$$;

-- Tables with a card_id: the boards of the cards of the old and new rows.
create function kanban_bump_boards_of_card_rows() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    update kanban_boards set version = version + 1
    where id in (select k.board_id from kanban_cards k where k.id in (select card_id from new_rows));
  elsif tg_op = 'DELETE' then
    update kanban_boards set version = version + 1
    where id in (select k.board_id from kanban_cards k where k.id in (select card_id from old_rows));
  else
    update kanban_boards set version = version + 1
    where id in (select k.board_id from kanban_cards k where k.id in (select card_id from new_rows union select card_id from old_rows));
  end if;
  return null;
end
$$;

create trigger kanban_columns_bump_insert after insert on kanban_columns
  referencing new table as new_rows for each statement execute function kanban_bump_boards_of_rows();
create trigger kanban_columns_bump_update after update on kanban_columns
  referencing old table as old_rows new table as new_rows for each statement execute function kanban_bump_boards_of_rows();
create trigger kanban_columns_bump_delete after delete on kanban_columns
  referencing old table as old_rows for each statement execute function kanban_bump_boards_of_rows();

create trigger kanban_cards_bump_insert after insert on kanban_cards
  referencing new table as new_rows for each statement execute function kanban_bump_boards_of_rows();
create trigger kanban_cards_bump_update after update on kanban_cards
  referencing old table as old_rows new table as new_rows for each statement execute function kanban_bump_boards_of_rows();
create trigger kanban_cards_bump_delete after delete on kanban_cards
  referencing old table as old_rows for each statement execute function kanban_bump_boards_of_rows();

create trigger kanban_labels_bump_insert after insert on kanban_labels
  referencing new table as new_rows for each statement execute function kanban_bump_boards_of_rows();
create trigger kanban_labels_bump_update after update on kanban_labels
  referencing old table as old_rows new table as new_rows for each statement execute function kanban_bump_boards_of_rows();
create trigger kanban_labels_bump_delete after delete on kanban_labels
  referencing old table as old_rows for each statement execute function kanban_bump_boards_of_rows();

create trigger kanban_card_labels_bump_insert after insert on kanban_card_labels
  referencing new table as new_rows for each statement execute function kanban_bump_boards_of_card_rows();
create trigger kanban_card_labels_bump_update after update on kanban_card_labels
  referencing old table as old_rows new table as new_rows for each statement execute function kanban_bump_boards_of_card_rows();
create trigger kanban_card_labels_bump_delete after delete on kanban_card_labels
  referencing old table as old_rows for each statement execute function kanban_bump_boards_of_card_rows();

create trigger kanban_card_assignees_bump_insert after insert on kanban_card_assignees
  referencing new table as new_rows for each statement execute function kanban_bump_boards_of_card_rows();
create trigger kanban_card_assignees_bump_update after update on kanban_card_assignees
  referencing old table as old_rows new table as new_rows for each statement execute function kanban_bump_boards_of_card_rows();
create trigger kanban_card_assignees_bump_delete after delete on kanban_card_assignees
  referencing old table as old_rows for each statement execute function kanban_bump_boards_of_card_rows();

-- The board read shows comment counts only: inserts and deletes change it, edits do not.
create trigger kanban_comments_bump_insert after insert on kanban_comments
  referencing new table as new_rows for each statement execute function kanban_bump_boards_of_card_rows();
create trigger kanban_comments_bump_delete after delete on kanban_comments
  referencing old table as old_rows for each statement execute function kanban_bump_boards_of_card_rows();

-- A person's name, username, kanban initials or colour shows on every card they are assigned to.
create function kanban_bump_boards_of_assignee() returns trigger language plpgsql as $$
begin
  update kanban_boards set version = version + 1
  where id in (select k.board_id from kanban_card_assignees a join kanban_cards k on k.id = a.card_id where a.user_id = new.id);
  return null;
end
$$;
create trigger users_bump_kanban_boards after update of name, username, kanban_initials, kanban_color on users
  for each row when (old.name is distinct from new.name or old.username is distinct from new.username
    or old.kanban_initials is distinct from new.kanban_initials or old.kanban_color is distinct from new.kanban_color)
  execute function kanban_bump_boards_of_assignee();
