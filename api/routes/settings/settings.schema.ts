import { z } from "zod";
import { NOTIFICATION_CHANNELS, NOTIFICATION_KINDS } from "../../../shared/settings/notificationKinds.ts";
import { language } from "../auth/auth.schema.ts";
import { themes } from "../profile/profile.schema.ts";

const channelChoices = z.strictObject(Object.fromEntries(NOTIFICATION_CHANNELS.map((c) => [c, z.boolean().optional()])) as Record<(typeof NOTIFICATION_CHANNELS)[number], z.ZodOptional<z.ZodBoolean>>);
const allChannels = z.object(Object.fromEntries(NOTIFICATION_CHANNELS.map((c) => [c, z.boolean()])) as Record<(typeof NOTIFICATION_CHANNELS)[number], z.ZodBoolean>);

/** PUT /settings (DESIGN §14): `{language, theme, notifications: {<kind>: {email, push}}}`, every part optional. */
export const updateSettingsBody = z.object({
  language: language.optional(),
  theme: z.enum(themes).optional(),
  notifications: z.strictObject(Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, channelChoices.optional()])) as Record<(typeof NOTIFICATION_KINDS)[number], z.ZodOptional<typeof channelChoices>>).optional(),
});

export const userSettingsResource = z.object({
  language: z.string(),
  theme: z.string(),
  notifications: z.object(Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, allChannels])) as Record<(typeof NOTIFICATION_KINDS)[number], typeof allChannels>),
});

/** PUT /admin/settings: every part optional; `upload_limit_bytes: null` and `payout_minimum_eur: null` return to the configured values. */
export const updateGlobalSettingsBody = z.object({
  registration_open: z.boolean().optional(),
  maintenance: z
    .object({
      enabled: z.boolean().optional(),
      message: z.string().trim().min(1).max(1000).nullable().optional(),
      retry_after_seconds: z.number().int().min(1).max(86_400).optional(),
    })
    .optional(),
  default_language: language.optional(),
  upload_limit_bytes: z.number().int().min(1024).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
  payout_minimum_eur: z.number().min(0).max(1_000_000).multipleOf(0.01).nullable().optional(),
});

export const globalSettingsResource = z.object({
  registration_open: z.boolean(),
  maintenance: z.object({ enabled: z.boolean(), message: z.string().nullable(), retry_after_seconds: z.number().int() }),
  default_language: z.string(),
  upload_limit_bytes: z.number().int(),
  upload_limit_ceiling_bytes: z.number().int(),
  payout_minimum_eur: z.number().nullable(),
  updated_at: z.string(),
});
