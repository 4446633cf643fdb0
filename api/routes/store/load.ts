/**
 * Loading store templates for the routes: who may see one (published ones for everybody,
 * every status for its seller and administrators) and who may change it (its seller).
 */
import type { UserRow } from "../../../shared/db/users.ts";
import { type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { forbidden, notFound } from "../../../shared/errors.ts";
import { findStoreTemplate, type StoreTemplateRow } from "../../../shared/store/catalog.ts";
import { isSiteAdmin } from "../../policies/roles.ts";

/** Whether `user` may see the store template (published, or their own, or an administrator). */
export const canViewStoreTemplate = (user: UserRow | null, row: { status: StoreTemplateRow["status"]; seller_id: number | null }) =>
  row.status === "published" || (user !== null && (row.seller_id === user.id || isSiteAdmin(user)));

/** A store template the caller may see. @throws 404 */
export async function storeTemplateForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<StoreTemplateRow> {
  const row = await findStoreTemplate(conn, id, user.id);
  if (!row || !canViewStoreTemplate(user, row)) throw notFound("Store template");
  return row;
}

/** A store template the caller may change (its seller). @throws 404 when unseen, 403 when not theirs */
export async function storeTemplateForEdit(conn: CommonQueryMethods, id: number, user: UserRow): Promise<StoreTemplateRow> {
  const row = await storeTemplateForRead(conn, id, user);
  if (row.seller_id !== user.id) throw forbidden("Only the seller may change this store template.");
  return row;
}
