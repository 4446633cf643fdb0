/**
 * Who sees and changes form sets (and so their windows and elements): the creator always;
 * with visibility `team`, members of any team the creator belongs to (or owns) may read and
 * clone; with `public`, everyone may; site administrators read every set. Only the creator
 * changes a set or anything in it.
 */
import { sql } from "../../shared/db/pool.ts";
import type { UserRow } from "../../shared/db/users.ts";
import type { FormSetRow } from "../../shared/forms/rows.ts";
import { isSiteAdmin } from "./roles.ts";

/** SQL condition over `fs`: the caller may read the set. */
export function formSetReadable(user: UserRow) {
  if (isSiteAdmin(user)) return sql.fragment`true`;
  return sql.fragment`(fs.creator_user_id = ${user.id} or fs.visibility = 'public' or (fs.visibility = 'team' and exists (
    select 1 from (
      select team_id from team_members where user_id = fs.creator_user_id
      union select id from teams where owner_id = fs.creator_user_id
    ) theirs join (
      select team_id from team_members where user_id = ${user.id}
      union select id from teams where owner_id = ${user.id}
    ) mine on mine.team_id = theirs.team_id)))`;
}

export const canEditFormSet = (user: UserRow, set: Pick<FormSetRow, "creator_user_id">) => set.creator_user_id === user.id;
