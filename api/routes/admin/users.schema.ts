import { z } from "zod";
import { roles } from "../../../shared/db/users.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";

export const userIdParams = z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

/** PUT /admin/users/{id} (DESIGN §14): every field optional; `disabled_at: null` re-enables. */
export const updateAdminUserBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  email_verified: z.boolean().optional(),
  roles: z.array(z.enum(roles)).max(roles.length).optional(),
  /** Any timestamp disables the account from now (the server's clock is what is stored). */
  disabled_at: z.iso.datetime({ offset: true }).nullable().optional(),
});
export type UpdateAdminUserInput = z.infer<typeof updateAdminUserBody>;

export const auditLogQuery = z.object({
  actor_id: idNumber().optional(),
  subject_type: z.string().trim().min(1).max(64).optional(),
  subject_id: idNumber().optional(),
  action: z.string().trim().min(1).max(64).optional(),
});
