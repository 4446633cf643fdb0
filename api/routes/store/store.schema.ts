/**
 * Request and response schemas of the template store routes (DESIGN §14 "Store").
 */
import { z } from "zod";
import { priceTypes, storeCategories } from "../../../shared/store/catalog.ts";
import { decimalNumber, idNumber, wholeNumber } from "../../../shared/canonicalNumbers.ts";

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const storeIdParams = z.object({ id });

const euros = z.number().min(0).max(1_000_000).multipleOf(0.01, { error: "The price must be given in whole cents." });

const fields = {
  name: z.string().trim().min(1).max(255),
  description: z.string().max(5000),
  category: z.enum(storeCategories),
  language: z.string().trim().min(1).max(64),
  price_type: z.enum(priceTypes),
  price_credits: z.number().int().min(0).max(10_000_000),
  price_euros: euros,
  template_ids: z.array(idNumber()).min(1).max(50),
};

/** Checks that the price fits the price type (credits > 0 for credits, euros > 0 for euros). */
function refinePrice(body: { price_type?: string; price_credits?: number; price_euros?: number }, ctx: z.RefinementCtx) {
  if (body.price_type === "credits" && !(body.price_credits && body.price_credits > 0)) {
    ctx.addIssue({ code: "custom", path: ["price_credits"], message: "A credits price needs price_credits above 0." });
  }
  if (body.price_type === "euros" && !(body.price_euros && body.price_euros > 0)) {
    ctx.addIssue({ code: "custom", path: ["price_euros"], message: "A euros price needs price_euros above 0." });
  }
}

const uniqueIds = (ids: number[] | undefined, ctx: z.RefinementCtx) => {
  if (ids && new Set(ids).size !== ids.length) ctx.addIssue({ code: "custom", path: ["template_ids"], message: "Each template may be packaged once." });
};

export const createStoreTemplateBody = z
  .object({
    ...fields,
    description: fields.description.default(""),
    price_credits: fields.price_credits.default(0),
    price_euros: fields.price_euros.default(0),
  })
  .superRefine((body, ctx) => {
    refinePrice(body, ctx);
    uniqueIds(body.template_ids, ctx);
  });

export const updateStoreTemplateBody = z
  .object({
    name: fields.name.optional(),
    description: fields.description.optional(),
    category: fields.category.optional(),
    language: fields.language.optional(),
    price_type: fields.price_type.optional(),
    price_credits: fields.price_credits.optional(),
    price_euros: fields.price_euros.optional(),
    template_ids: fields.template_ids.optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." })
  .superRefine((body, ctx) => uniqueIds(body.template_ids, ctx));

/** GET /store/templates: the spec's filters, sort and `page`/`rows` pagination. */
export const browseQuery = z
  .object({
    q: z.string().trim().max(200).optional(),
    category: z.enum(storeCategories).optional(),
    language: z.string().trim().min(1).max(64).optional(),
    price_min: decimalNumber({ min: 0, max: 10_000_000 }).optional(),
    price_max: decimalNumber({ min: 0, max: 10_000_000 }).optional(),
    sort: z.enum(["sales_count", "rating", "newest"]).optional(),
    page: wholeNumber({ min: 1, max: 100_000, default: 1 }),
    rows: wholeNumber({ min: 1, max: 100, default: 12 }),
  })
  .refine((q) => q.price_min === undefined || q.price_max === undefined || q.price_min <= q.price_max, {
    path: ["price_max"],
    message: "price_max must not be below price_min.",
  });
export type BrowseQuery = z.infer<typeof browseQuery>;

/** Store pagination (spec Limits: `page` default 1, `rows` default 12). */
export const storePageQuery = z.object({
  page: wholeNumber({ min: 1, max: 100_000, default: 1 }),
  rows: wholeNumber({ min: 1, max: 100, default: 12 }),
});

const creator = z.object({ id: z.number(), username: z.string(), name: z.string() });
export const storeMediaResource = z.object({
  id: z.number(),
  media_type: z.enum(["logo", "image", "video"]),
  title: z.string().nullable(),
  file_path: z.string().nullable(),
  url: z.string().nullable(),
  video_url: z.string().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
});

export const storeTemplateResource = z.object({
  id: z.number(),
  name: z.string(),
  full_name: z.string(),
  description: z.string(),
  category: z.string(),
  language: z.string(),
  price_type: z.enum(priceTypes),
  price_credits: z.number(),
  price_euros: z.number(),
  sales_count: z.number(),
  review_score: z.number().nullable(),
  review_count: z.number(),
  status: z.string(),
  version: z.number().nullable(),
  /** Null once the seller closed their account (an administrator still sees the withdrawn template). */
  creator: creator.nullable(),
  logo: z.string().nullable(),
  images: z.array(storeMediaResource),
  media: z.array(storeMediaResource),
  is_purchased: z.boolean(),
  is_own: z.boolean(),
  can_purchase: z.boolean(),
  created_at: z.string(),
  published_at: z.string().nullable(),
});

/** A paginated store list: `{data, meta: {current_page, rows, total, last_page}}`. */
export const storePageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    meta: z.object({ current_page: z.number().int(), rows: z.number().int(), total: z.number().int(), last_page: z.number().int() }),
  });

/** The store list envelope. */
export const storePage = <T>(data: T[], total: number, q: { page: number; rows: number }) => ({
  data,
  meta: { current_page: q.page, rows: q.rows, total, last_page: Math.max(1, Math.ceil(total / q.rows)) },
});

export const plagiarismResource = z.object({
  is_duplicate: z.boolean(),
  similarity_score: z.number(),
  similar_templates: z.array(z.number()),
  checked_at: z.string(),
});
