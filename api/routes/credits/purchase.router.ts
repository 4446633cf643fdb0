/**
 * POST /credits/purchase (spec): buy a credit package by card (the card processor) or wallet
 * (the wallet provider). Answers 201 with the pending transaction; the provider's webhook
 * credits it.
 */
import { z } from "zod";
import { paymentMethods } from "../../../shared/payments/providers.ts";
import { purchasePackage } from "../../../shared/payments/purchase.ts";
import { currentUser } from "../../context.ts";
import { presentTransaction, transactionResource } from "../../presenters/payments.ts";
import { defineRoute } from "../route.ts";

const purchase = defineRoute({
  method: "post",
  path: "/credits/purchase",
  summary: "Buy a credit package",
  description:
    "`cardprocessor`: the answer's `transaction.client_secret` confirms the PaymentIntent with Stripe.js. `walletprovider`: send the buyer to `transaction.approval_url`. Credits arrive when the provider's webhook reports the payment; 503 `payment_provider_unavailable` when that provider is not configured, 502 `payment_provider_error` when it refused.",
  tags: ["Credits"],
  auth: "bearer",
  body: z.object({ package_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER), payment_method: z.enum(paymentMethods) }),
  responses: {
    201: { description: "Payment started", schema: z.object({ message: z.string(), transaction: transactionResource }) },
    404: { description: "No such active package" },
    502: { description: "The provider refused or could not be reached" },
    503: { description: "The payment method is not configured" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const started = await purchasePackage(ctx.deps.pool, ctx.deps.config, user, body.package_id, body.payment_method);
    ctx.status = 201;
    ctx.body = {
      message: "Payment started.",
      transaction: presentTransaction(started.transaction, { client_secret: started.clientSecret, approval_url: started.approvalUrl }),
    };
  },
});

export const purchaseRoutes = [purchase];
