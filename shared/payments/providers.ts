/**
 * The two payment providers as the rest of the service names them: `cardprocessor` (Stripe)
 * and `walletprovider` (PayPal). A provider whose keys are not configured is off; asking for
 * it answers 503 `payment_provider_unavailable`.
 */
import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";

export const paymentMethods = ["cardprocessor", "walletprovider"] as const;
export type PaymentMethod = (typeof paymentMethods)[number];

/** 503 for a provider that is not configured. */
export const providerUnavailable = (method: PaymentMethod) =>
  new AppError(503, "payment_provider_unavailable", `Payments by ${method === "cardprocessor" ? "card" : "wallet"} are not available on this server.`);

/** 502 when the provider refused or could not be reached; nothing was charged. */
export const providerFailed = (detail: string) => new AppError(502, "payment_provider_error", `The payment provider did not accept the payment: ${detail}`);

/** Whether `method` has its keys configured. */
export function providerConfigured(config: Config, method: PaymentMethod): boolean {
  const { stripe, paypal } = config.payments;
  return method === "cardprocessor" ? Boolean(stripe.secretKey) : Boolean(paypal.clientId && paypal.clientSecret);
}
