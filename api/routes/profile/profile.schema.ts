import { z } from "zod";
import { isValidIban, normalizeIban } from "../../../shared/iban.ts";
import { language, password } from "../auth/auth.schema.ts";

export const themes = ["light", "dark", "system"] as const;

export const profileBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  email: z.email().trim().max(254).optional(),
  username: z.string().trim().regex(/^[A-Za-z0-9_.-]{2,64}$/, { error: "The username may contain letters, digits, dots, dashes and underscores (2-64)." }).optional(),
  language: language.optional(),
  theme: z.enum(themes).optional(),
  kanban_initials: z.string().trim().min(1).max(4).nullable().optional(),
  kanban_color: z.string().regex(/^#[0-9A-Fa-f]{6}$/, { error: "The kanban color field must be a hex color such as #1a2b3c." }).nullable().optional(),
  /** Required when `email` changes: the account's password, checked like a login. */
  current_password: z.string().max(1024).optional(),
  /** Required when `email` changes on an account with two-factor authentication: a current TOTP code or a recovery code. */
  two_factor_code: z.string().trim().max(32).optional(),
});

export const passwordChangeBody = z
  .object({
    current_password: z.string().min(1).max(1024),
    password,
    password_confirmation: z.string().max(1024),
    /** Required when the account uses two-factor authentication: a current TOTP code or a recovery code. */
    two_factor_code: z.string().trim().max(32).optional(),
  })
  .refine((v) => v.password === v.password_confirmation, { path: ["password"], message: "The password field confirmation does not match." });

export const languageBody = z.object({ language });
export const themeBody = z.object({ theme: z.enum(themes) });
export const deleteAccountBody = z.object({
  password: z.string().min(1).max(1024),
  /** Required when the account uses two-factor authentication: a current TOTP code or a recovery code. */
  two_factor_code: z.string().trim().max(32).optional(),
});

export const sellerBody = z
  .object({
    is_seller: z.boolean(),
    company_name: z.string().trim().max(255).nullable().optional(),
    company_address: z.string().trim().max(1000).nullable().optional(),
    company_country: z.string().trim().toUpperCase().regex(/^[A-Z]{2}$/, { error: "The company country field must be a two-letter country code." }).nullable().optional(),
    vat_id: z.string().trim().toUpperCase().regex(/^[A-Z]{2}[A-Z0-9+*.]{2,13}$/, { error: "The vat id field format is invalid." }).nullable().optional(),
    payout_method: z.enum(["bank_transfer"]).nullable().optional(),
    bank_iban: z
      .string()
      .transform(normalizeIban)
      .refine(isValidIban, { error: "The bank iban field must be a valid IBAN." })
      .nullable()
      .optional(),
    bank_account_holder: z.string().trim().min(1).max(255).nullable().optional(),
    /** Required when the IBAN or the account holder changes on an account that has one (or has earned): the account's password. */
    current_password: z.string().max(1024).optional(),
    /** With `current_password`, on an account with two-factor authentication: a current TOTP code or a recovery code. */
    two_factor_code: z.string().trim().max(32).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.is_seller && v.payout_method === "bank_transfer") {
      if (v.bank_account_holder === null) ctx.addIssue({ code: "custom", path: ["bank_account_holder"], message: "The bank account holder field is required for bank transfers." });
      if (v.bank_iban === null) ctx.addIssue({ code: "custom", path: ["bank_iban"], message: "The bank iban field is required for bank transfers." });
    }
  });
