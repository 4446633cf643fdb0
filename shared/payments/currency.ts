/**
 * Which currencies prices in cents may name. Amounts are kept as integer hundredths
 * (`price_cents`, `amount_cents`): the card processor takes them as the currency's smallest
 * unit, the wallet provider as `cents / 100` with two decimals, and invoices print them so. Both
 * readings agree only for a currency with exactly two decimals: for the yen (none) 500 would be
 * ¥500 by card, an order of ¥5.00 the wallet provider refuses, and an invoice of "5.00 JPY".
 */

const known = new Set(Intl.supportedValuesOf("currency"));

/** True for an ISO 4217 code of a currency with two decimal places (EUR, USD, GBP, …). */
export function isCentCurrency(code: string): boolean {
  if (!known.has(code)) return false;
  return new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions().maximumFractionDigits === 2;
}
