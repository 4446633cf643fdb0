/**
 * The User resource exactly as the spec lists it; never the password, secrets or tokens.
 */
import { z } from "zod";
import type { UserRow } from "../../shared/db/users.ts";

export const userResource = z.object({
  id: z.number(),
  name: z.string(),
  username: z.string(),
  email: z.string(),
  language: z.string(),
  theme: z.string(),
  email_verified_at: z.string().nullable(),
  is_seller: z.boolean(),
  created_at: z.string(),
  kanban_initials: z.string().nullable(),
  kanban_color: z.string().nullable(),
});

export function presentUser(user: UserRow): z.infer<typeof userResource> {
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    email: user.email,
    language: user.language,
    theme: user.theme,
    email_verified_at: user.email_verified_at?.toISOString() ?? null,
    is_seller: user.is_seller,
    created_at: user.created_at.toISOString(),
    kanban_initials: user.kanban_initials,
    kanban_color: user.kanban_color,
  };
}

/** A user as site administrators see them: the resource plus roles and 2FA state. */
export const adminUserResource = userResource.extend({ roles: z.array(z.string()), disabled_at: z.string().nullable() });

export const presentAdminUser = (user: UserRow) => ({ ...presentUser(user), roles: [...user.roles], disabled_at: user.disabled_at?.toISOString() ?? null });
