/**
 * SQL of credit packages and payment transactions.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const creditPackageRow = z.object({
  id: z.number(),
  name: z.string(),
  credits: z.number(),
  price_cents: z.number(),
  currency: z.string(),
  is_active: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type CreditPackageRow = z.infer<typeof creditPackageRow>;
const packageColumns = sql.fragment`id, name, credits, price_cents, currency, is_active, created_at, updated_at`;

/** Packages, cheapest first; `activeOnly` for the public list. */
export async function listCreditPackages(conn: CommonQueryMethods, activeOnly: boolean): Promise<readonly CreditPackageRow[]> {
  return conn.any(sql.type(creditPackageRow)`
    select ${packageColumns} from credit_packages ${activeOnly ? sql.fragment`where is_active` : sql.fragment``} order by price_cents, id`);
}

/** One package, or null. */
export async function findCreditPackage(conn: CommonQueryMethods, id: number): Promise<CreditPackageRow | null> {
  return conn.maybeOne(sql.type(creditPackageRow)`select ${packageColumns} from credit_packages where id = ${id}`);
}

/** Fields an administrator sets on a package. */
export interface CreditPackageInput {
  name: string;
  credits: number;
  price_cents: number;
  currency: string;
  is_active: boolean;
}

/** Inserts a package. */
export async function insertCreditPackage(conn: CommonQueryMethods, input: CreditPackageInput): Promise<CreditPackageRow> {
  return conn.one(sql.type(creditPackageRow)`
    insert into credit_packages (name, credits, price_cents, currency, is_active)
    values (${input.name}, ${input.credits}, ${input.price_cents}, ${input.currency}, ${input.is_active})
    returning ${packageColumns}`);
}

/** Updates the given fields of a package; null when it does not exist. */
export async function updateCreditPackage(conn: CommonQueryMethods, id: number, input: Partial<CreditPackageInput>): Promise<CreditPackageRow | null> {
  const sets = [sql.fragment`updated_at = now()`];
  for (const [column, value] of Object.entries(input)) {
    if (value !== undefined) sets.push(sql.fragment`${sql.identifier([column])} = ${value}`);
  }
  return conn.maybeOne(sql.type(creditPackageRow)`
    update credit_packages set ${sql.join(sets, sql.fragment`, `)} where id = ${id} returning ${packageColumns}`);
}

/** Deletes a package never bought, or deactivates one that was (its purchases keep it). Returns what happened, or null. */
export async function deleteCreditPackage(conn: CommonQueryMethods, id: number): Promise<"deleted" | "deactivated" | null> {
  const bought = await conn.maybeOneFirst(sql.type(z.object({ bought: z.boolean() }))`
    select exists (select 1 from credit_transactions where package_id = p.id) as bought from credit_packages p where p.id = ${id} for update`);
  if (bought === null) return null;
  if (bought) {
    await conn.query(sql.type(ignoredRow)`update credit_packages set is_active = false, updated_at = now() where id = ${id}`);
    return "deactivated";
  }
  await conn.query(sql.type(ignoredRow)`delete from credit_packages where id = ${id}`);
  return "deleted";
}

export const transactionStatuses = ["pending", "succeeded", "failed", "refunded"] as const;

export const transactionRow = z.object({
  id: z.number(),
  user_id: z.number(),
  kind: z.enum(["credit_package", "subscription", "patron", "store_template"]),
  package_id: z.number().nullable(),
  item_id: z.number().nullable(),
  project_id: z.number().nullable(),
  payment_method: z.enum(["cardprocessor", "walletprovider"]),
  status: z.enum(transactionStatuses),
  credits: z.number(),
  amount_cents: z.number(),
  currency: z.string(),
  provider_payment_id: z.string().nullable(),
  provider_order_id: z.string().nullable(),
  provider_capture_id: z.string().nullable(),
  refund_shortfall: z.number(),
  refunded_cents: z.number(),
  failure_reason: z.string().nullable(),
  /** Why the service refunds the payment by itself (it delivered nothing), when it does. */
  refund_reason: z.enum(["project_deleted", "subscription_active", "already_purchased", "item_unavailable", "admin_refund"]).nullable(),
  provider_refund_id: z.string().nullable(),
  succeeded_at: z.date().nullable(),
  refunded_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type TransactionRow = z.infer<typeof transactionRow>;
export const transactionColumns = sql.fragment`
  id, user_id, kind, package_id, item_id, project_id, payment_method, status, credits, amount_cents, currency,
  provider_payment_id, provider_order_id, provider_capture_id, refund_shortfall, refunded_cents, failure_reason, refund_reason, provider_refund_id,
  succeeded_at, refunded_at, created_at, updated_at`;

/** A new pending transaction. */
export async function insertTransaction(
  conn: CommonQueryMethods,
  input: Pick<TransactionRow, "user_id" | "kind" | "package_id" | "item_id" | "project_id" | "payment_method" | "credits" | "amount_cents" | "currency">,
): Promise<TransactionRow> {
  return conn.one(sql.type(transactionRow)`
    insert into credit_transactions (user_id, kind, package_id, item_id, project_id, payment_method, credits, amount_cents, currency)
    values (${input.user_id}, ${input.kind}, ${input.package_id}, ${input.item_id}, ${input.project_id}, ${input.payment_method}, ${input.credits}, ${input.amount_cents}, ${input.currency})
    returning ${transactionColumns}`);
}

/** Records the provider's ids (or a failure to reach it) on a pending transaction. */
export async function setTransactionProvider(
  conn: CommonQueryMethods,
  id: number,
  input: { paymentId?: string; orderId?: string; failure?: string },
): Promise<TransactionRow> {
  return conn.one(sql.type(transactionRow)`
    update credit_transactions set
      provider_payment_id = coalesce(${input.paymentId ?? null}, provider_payment_id),
      provider_order_id = coalesce(${input.orderId ?? null}, provider_order_id),
      status = case when ${input.failure ?? null}::text is null then status else 'failed' end,
      failure_reason = coalesce(${input.failure ?? null}, failure_reason),
      updated_at = now()
    where id = ${id} returning ${transactionColumns}`);
}

/**
 * The transaction a provider event names, row-locked (`lock`): every id the event gives must
 * match, our id (Stripe metadata, PayPal custom_id) and the provider's payment, order or capture id alike.
 * Another integration on the same provider account may put its own number in those free fields,
 * so our id alone must not pick a transaction when the event names a payment that is not ours.
 */
export async function findTransactionForEvent(
  conn: CommonQueryMethods,
  by: { id?: number | null; paymentId?: string | null; orderId?: string | null; captureId?: string | null },
  lock = true,
): Promise<TransactionRow | null> {
  const filters = [];
  if (by.id) filters.push(sql.fragment`id = ${by.id}`);
  if (by.paymentId) filters.push(sql.fragment`provider_payment_id = ${by.paymentId}`);
  if (by.orderId) filters.push(sql.fragment`provider_order_id = ${by.orderId}`);
  if (by.captureId) filters.push(sql.fragment`provider_capture_id = ${by.captureId}`);
  if (!filters.length) return null;
  return conn.maybeOne(sql.type(transactionRow)`
    select ${transactionColumns} from credit_transactions where ${sql.join(filters, sql.fragment` and `)} ${lock ? sql.fragment`for update` : sql.fragment``}`);
}
