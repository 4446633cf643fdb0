import { z } from "zod";
import { TOKEN_MAX_LIFETIME_DAYS } from "../../../shared/auth/personalTokens.ts";
import { ABILITIES } from "../../../shared/auth/scopes.ts";
import { userResource } from "../../presenters/user.ts";
import { wholeNumber } from "../../../shared/canonicalNumbers.ts";

export const email = z.email().trim().max(254);
export const password = z.string().min(8).max(1024);
export const language = z.enum(["en", "de"]);

/** Adds "confirmed" checking for a password_confirmation field. */
const confirmed = <T extends { password: string; password_confirmation?: string | undefined }>(value: T, ctx: z.RefinementCtx) => {
  if (value.password_confirmation !== undefined && value.password_confirmation !== value.password) {
    ctx.addIssue({ code: "custom", path: ["password"], message: "The password field confirmation does not match." });
  }
};

/** Both registration forms of the spec: the full one (username, confirmation, language) and email/password/name. */
export const registerBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    username: z.string().trim().regex(/^[A-Za-z0-9_.-]{2,64}$/, { error: "The username may contain letters, digits, dots, dashes and underscores (2-64)." }).optional(),
    email,
    password,
    password_confirmation: z.string().max(1024).optional(),
    language: language.optional(),
    invitation_token: z.string().min(1).max(255).optional(),
  })
  .superRefine((value, ctx) => {
    if (value.username !== undefined && value.password_confirmation === undefined) {
      ctx.addIssue({ code: "custom", path: ["password_confirmation"], message: "The password confirmation field is required." });
    }
    confirmed(value, ctx);
  });

/** The browser a client names for its device (`Firefox on Linux`); blank counts as not named. Trust compares it as given. */
const browser = z
  .string()
  .trim()
  .max(255)
  .optional()
  .transform((value) => value || undefined);

export const loginBody = z.object({
  email,
  password: z.string().min(1).max(1024),
  device_id: z.string().min(8).max(255).optional(),
  /** With device_id: a trusted device skips the second factor only when the browser is the one it was trusted with. */
  browser,
});

export const login2faBody = z.object({
  two_factor_token: z.string().min(10).max(255),
  code: z.string().trim().min(6).max(32),
  trust_device: z.boolean().optional().default(false),
  device_id: z.string().min(8).max(255).optional(),
  browser,
});

export const forgotPasswordBody = z.object({ email });

export const resetPasswordBody = z
  .object({ token: z.string().min(10).max(255), email, password, password_confirmation: z.string().max(1024) })
  .superRefine(confirmed);

export const verifyEmailParams = z.object({
  id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  hash: z.string().regex(/^[0-9a-f]{40}$/),
});
export const verifyEmailQuery = z.object({
  expires: wholeNumber({ min: 1 }),
  signature: z.string().regex(/^[0-9a-f]{64}$/, { error: "The signature is invalid." }),
});

export const apiTokenBody = z.object({
  name: z.string().trim().min(1).max(255),
  /** Scopes of the token (shared/auth/scopes.ts); `*` = every scope the user's roles allow when it is used. */
  abilities: z
    .array(z.enum(ABILITIES, { error: `Each ability must be one of: ${ABILITIES.join(", ")}.` }))
    .min(1, { error: "Give at least one ability, or leave the field out for `*`." })
    .max(ABILITIES.length)
    .refine((list) => new Set(list).size === list.length, { error: "Each ability may be given once." })
    .optional(),
  /** When the token stops working: in the future, at most TOKEN_MAX_LIFETIME_DAYS ahead; left out, it never expires. */
  expires_at: z.iso
    .datetime({ offset: true, error: "The expires at field must be an ISO 8601 date and time with a time zone." })
    .refine((text) => Date.parse(text) > Date.now(), { error: "The expires at field must be a time in the future." })
    .refine((text) => Date.parse(text) <= Date.now() + TOKEN_MAX_LIFETIME_DAYS * 86_400_000, {
      error: `The expires at field may be at most ${TOKEN_MAX_LIFETIME_DAYS} days ahead.`,
    })
    .optional(),
});

export const tokenResponse = z.object({
  message: z.string(),
  user: userResource,
  access_token: z.string(),
  token_type: z.literal("Bearer"),
  expires_in: z.number(),
  has_pending_invitation: z.boolean(),
  monthly_credits_awarded: z.boolean(),
});

export const twoFactorRequiredResponse = z.object({
  message: z.string(),
  two_factor_required: z.literal(true),
  two_factor_token: z.string(),
  needs_reverification: z.boolean(),
});

export const messageResponse = z.object({ message: z.string() });
