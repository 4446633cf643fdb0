/**
 * Credit packages: the public list (DESIGN §11 `GET /credit-packages`) and the
 * administrators' management under `/admin/credit-packages`. A package that was bought is
 * deactivated instead of deleted, so its purchases keep naming it.
 */
import { z } from "zod";
import { notFound } from "../../../shared/errors.ts";
import { isCentCurrency } from "../../../shared/payments/currency.ts";
import { deleteCreditPackage, findCreditPackage, insertCreditPackage, listCreditPackages, updateCreditPackage } from "../../../shared/payments/store.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { adminCreditPackageResource, creditPackageResource, presentAdminCreditPackage, presentCreditPackage } from "../../presenters/payments.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";

const currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .refine(isCentCurrency, "Expected the ISO 4217 code of a currency with two decimal places (prices are in its hundredths), such as EUR.");
const packageBody = z.object({
  name: z.string().trim().min(1).max(100),
  credits: z.number().int().min(1).max(10_000_000),
  price_cents: z.number().int().min(50).max(100_000_000),
  currency: currency.default("EUR"),
  is_active: z.boolean().default(true),
});
const packageUpdate = z.object({
  name: packageBody.shape.name.optional(),
  credits: packageBody.shape.credits.optional(),
  price_cents: packageBody.shape.price_cents.optional(),
  currency: currency.optional(),
  is_active: z.boolean().optional(),
});

const adminOnly = (ctx: AppContext) => authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may manage credit packages.");
const denied = { 403: { description: "Not an administrator" } };
const tags = ["Credits"];
const one = z.object({ message: z.string(), credit_package: adminCreditPackageResource });

const publicList = defineRoute({
  method: "get",
  path: "/credit-packages",
  summary: "Credit packages for sale",
  tags,
  auth: "public",
  responses: { 200: { description: "Active packages, cheapest first", schema: z.object({ data: z.array(creditPackageResource) }) } },
  handler: async (ctx) => {
    ctx.body = { data: (await listCreditPackages(ctx.deps.pool, true)).map(presentCreditPackage) };
  },
});

const adminList = defineRoute({
  method: "get",
  path: "/admin/credit-packages",
  summary: "Every credit package, inactive ones included",
  tags: ["Admin"],
  auth: "bearer",
  responses: { 200: { description: "Packages", schema: z.object({ data: z.array(adminCreditPackageResource) }) }, ...denied },
  handler: async (ctx) => {
    adminOnly(ctx);
    ctx.body = { data: (await listCreditPackages(ctx.deps.pool, false)).map(presentAdminCreditPackage) };
  },
});

const adminShow = defineRoute({
  method: "get",
  path: "/admin/credit-packages/{id}",
  summary: "One credit package",
  tags: ["Admin"],
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The package", schema: z.object({ credit_package: adminCreditPackageResource }) }, ...denied, 404: { description: "No such package" } },
  handler: async (ctx, { params }) => {
    adminOnly(ctx);
    const row = await findCreditPackage(ctx.deps.pool, params.id);
    if (!row) throw notFound("Credit package");
    ctx.body = { credit_package: presentAdminCreditPackage(row) };
  },
});

const adminCreate = defineRoute({
  method: "post",
  path: "/admin/credit-packages",
  summary: "Create a credit package",
  tags: ["Admin"],
  auth: "bearer",
  body: packageBody,
  responses: { 201: { description: "Created", schema: one }, ...denied },
  handler: async (ctx, { body }) => {
    adminOnly(ctx);
    const row = await insertCreditPackage(ctx.deps.pool, body);
    ctx.status = 201;
    ctx.body = { message: "Credit package created.", credit_package: presentAdminCreditPackage(row) };
  },
});

const adminUpdate = defineRoute({
  method: "put",
  path: "/admin/credit-packages/{id}",
  summary: "Change a credit package (past purchases keep what they paid)",
  tags: ["Admin"],
  auth: "bearer",
  params: idParams,
  body: packageUpdate,
  responses: { 200: { description: "Updated", schema: one }, ...denied, 404: { description: "No such package" } },
  handler: async (ctx, { params, body }) => {
    adminOnly(ctx);
    const row = await updateCreditPackage(ctx.deps.pool, params.id, body);
    if (!row) throw notFound("Credit package");
    ctx.body = { message: "Credit package updated.", credit_package: presentAdminCreditPackage(row) };
  },
});

const adminDelete = defineRoute({
  method: "delete",
  path: "/admin/credit-packages/{id}",
  summary: "Delete a credit package, or deactivate it when it was bought",
  tags: ["Admin"],
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Deleted or deactivated", schema: z.object({ message: z.string(), result: z.enum(["deleted", "deactivated"]) }) }, ...denied, 404: { description: "No such package" } },
  handler: async (ctx, { params }) => {
    adminOnly(ctx);
    const result = await ctx.deps.pool.transaction((tx) => deleteCreditPackage(tx, params.id));
    if (!result) throw notFound("Credit package");
    ctx.body = { message: result === "deleted" ? "Credit package deleted." : "Credit package deactivated; it was bought before.", result };
  },
});

export const creditPackageRoutes = [publicList, adminList, adminShow, adminCreate, adminUpdate, adminDelete];
