-- A layout write after a drag rewrites most of a window's elements in place. With pages
-- left half free, the new row versions fit beside the old ones and PostgreSQL updates them
-- as heap-only tuples: no new entries in the primary key and tab order indexes per moved
-- element (the next write on the page prunes the old versions). Inserts of new elements
-- leave the same room.
alter table form_elements set (fillfactor = 50);
