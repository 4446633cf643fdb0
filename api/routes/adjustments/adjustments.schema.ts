/**
 * Request schemas of the code adjustment routes (DESIGN §14): the edited file (`content`)
 * or a unified diff (`diff`), never both.
 */
import { z } from "zod";

/** Largest adjusted file or diff, as a template file. */
const MAX_TEXT = 4_000_000;

const content = z.string().max(MAX_TEXT);
const diff = z.string().min(1).max(MAX_TEXT);
const filePath = z.string().min(1).max(1024);

const oneOf = (body: { content?: string | undefined; diff?: string | undefined }, ctx: z.RefinementCtx, required: boolean) => {
  if (body.content !== undefined && body.diff !== undefined) ctx.addIssue({ code: "custom", path: ["diff"], message: "Send the content or a diff, not both." });
  else if (required && body.content === undefined && body.diff === undefined) ctx.addIssue({ code: "custom", path: ["content"], message: "The content field is required when diff is not present." });
};

export const createAdjustmentBody = z
  .object({ file_path: filePath, content: content.optional(), diff: diff.optional() })
  .superRefine((body, ctx) => oneOf(body, ctx, true));

export const updateAdjustmentBody = z
  .object({ content: content.optional(), diff: diff.optional(), is_active: z.boolean().optional() })
  .superRefine((body, ctx) => {
    oneOf(body, ctx, false);
    if (body.content === undefined && body.diff === undefined && body.is_active === undefined) {
      ctx.addIssue({ code: "custom", path: ["content"], message: "Send content, diff or is_active." });
    }
  });

/** Largest JSON body of these routes: a whole file, JSON-escaped. */
export const ADJUSTMENT_BODY_LIMIT = 2 * MAX_TEXT + 64 * 1024;
