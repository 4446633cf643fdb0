/**
 * Form designer access (DESIGN §11, §14): `GET /form-designer/access` reads the caller's
 * status; `POST /form-designer/unlock` `{access_type: credits|trial}` buys the one-time
 * unlock or starts the account's one trial.
 */
import { z } from "zod";
import { accessStatus, accessStatusSchema, startTrial, unlockWithCredits } from "../../../shared/forms/access.ts";
import { currentUser } from "../../context.ts";
import { defineRoute } from "../route.ts";

const tags = ["Form designer"];

const show = defineRoute({
  method: "get",
  path: "/form-designer/access",
  summary: "Whether the caller may use the form designer, and how (patron, credits, trial)",
  description: "A trial shows as `access_type` `credits` with `credits_paid` 0 and `is_trial` true; `trial_available` says whether the account may still start one.",
  tags,
  auth: "bearer",
  responses: { 200: { description: "The access status", schema: z.object({ access: accessStatusSchema }) } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    ctx.body = { access: await accessStatus(ctx.deps.pool, user.id, ctx.deps.config) };
  },
});

const unlockBody = z.object({ access_type: z.enum(["credits", "trial"]) });

const unlock = defineRoute({
  method: "post",
  path: "/form-designer/unlock",
  summary: "Unlock the form designer: the one-time purchase in credits, or the account's one trial",
  description: "`trial` starts FORM_DESIGNER_TRIAL_DAYS of access, once per account (409 `trial_used` after that). `credits` spends FORM_DESIGNER_UNLOCK_COST credits for access that does not expire (402 `insufficient_credits` when the balance does not cover it). 409 `already_unlocked` when the caller has access anyway (for a trial) or bought the unlock before.",
  tags,
  auth: "bearer",
  body: unlockBody,
  responses: {
    200: { description: "Unlocked; the new status", schema: z.object({ message: z.string(), access: accessStatusSchema }) },
    402: { description: "The balance does not cover the unlock" },
    409: { description: "Access already granted, or the trial already used" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    if (body.access_type === "trial") {
      await pool.transaction((tx) => startTrial(tx, user.id, config));
    } else {
      await pool.transaction((tx) => unlockWithCredits(tx, user.id, config));
    }
    ctx.body = { message: body.access_type === "trial" ? "Trial started." : "Form designer unlocked.", access: await accessStatus(pool, user.id, config) };
  },
});

export const formDesignerAccessRoutes = [show, unlock];
