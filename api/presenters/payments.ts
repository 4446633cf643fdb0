/**
 * Credit packages and payment transactions as clients see them (the spec leaves both open).
 */
import { z } from "zod";
import type { CreditPackageRow, TransactionRow } from "../../shared/payments/store.ts";

export const creditPackageResource = z.object({
  id: z.number(),
  name: z.string(),
  credits: z.number(),
  price_cents: z.number().describe("Price in cents of `currency` (euro cents)."),
  currency: z.string(),
});
export const adminCreditPackageResource = creditPackageResource.extend({ is_active: z.boolean(), created_at: z.string(), updated_at: z.string() });

/** A package in the public list. */
export const presentCreditPackage = (row: CreditPackageRow): z.infer<typeof creditPackageResource> => ({
  id: row.id,
  name: row.name,
  credits: row.credits,
  price_cents: row.price_cents,
  currency: row.currency,
});

/** A package as administrators manage it. */
export const presentAdminCreditPackage = (row: CreditPackageRow): z.infer<typeof adminCreditPackageResource> => ({
  ...presentCreditPackage(row),
  is_active: row.is_active,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

export const transactionResource = z.object({
  id: z.number(),
  kind: z.enum(["credit_package", "subscription", "patron", "store_template"]),
  package_id: z.number().nullable(),
  payment_method: z.enum(["cardprocessor", "walletprovider"]),
  status: z.enum(["pending", "succeeded", "failed", "refunded"]),
  credits: z.number(),
  amount_cents: z.number(),
  currency: z.string(),
  provider_payment_id: z.string().nullable().describe("The card processor's PaymentIntent id."),
  provider_order_id: z.string().nullable().describe("The wallet provider's order id."),
  refund_shortfall: z.number().describe("Refunded credits that had already been spent."),
  refunded_cents: z.number().describe("Cents refunded so far; a partial refund takes back the same share of the credits, and the status becomes `refunded` once all of it is back."),
  failure_reason: z.string().nullable(),
  client_secret: z.string().nullable().optional().describe("Card: the PaymentIntent's client secret, only in the purchase answer."),
  approval_url: z.string().nullable().optional().describe("Wallet: where the buyer approves the order, only in the purchase answer."),
  succeeded_at: z.string().nullable(),
  refunded_at: z.string().nullable(),
  created_at: z.string(),
});

/** A transaction; `extra` adds what the purchase answer carries once. */
export const presentTransaction = (row: TransactionRow, extra: { client_secret?: string | null; approval_url?: string | null } = {}): z.infer<typeof transactionResource> => ({
  id: row.id,
  kind: row.kind,
  package_id: row.package_id,
  payment_method: row.payment_method,
  status: row.status,
  credits: row.credits,
  amount_cents: row.amount_cents,
  currency: row.currency,
  provider_payment_id: row.provider_payment_id,
  provider_order_id: row.provider_order_id,
  refund_shortfall: row.refund_shortfall,
  refunded_cents: row.refunded_cents,
  failure_reason: row.failure_reason,
  ...extra,
  succeeded_at: row.succeeded_at?.toISOString() ?? null,
  refunded_at: row.refunded_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
});
