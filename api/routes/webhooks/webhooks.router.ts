/**
 * Outbound webhooks of a project (spec: POST|GET /projects/{id}/webhooks, DELETE
 * /webhooks/{id}; also GET|PUT /webhooks/{id}, its delivery log, and POST
 * /webhooks/{id}/trigger for a manual delivery).
 *
 * `secret_key` is chosen by the caller (required on create, replaced by PUT), stored sealed
 * under APP_KEY and never answered: every response says `has_secret_key` instead (DESIGN §8).
 * Target URLs pass the network guard (and again at every connection).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { seal } from "../../../shared/crypto.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { conflict, invalid, invalidField, notFound, type FieldErrors } from "../../../shared/errors.ts";
import { cronProblem, timezoneProblem } from "../../../shared/webhooks/cron.ts";
import {
  deliveryColumns,
  deliveryRow,
  findWebhook,
  latestGeneration,
  scheduleDelivery,
  webhookColumns,
  webhookEvents,
  webhookRow,
  type WebhookRow,
} from "../../../shared/webhooks/store.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment, paginationQuery } from "../../pagination.ts";
import { projectForDeploy, projectForDeploymentConfig, projectForDeploymentRead } from "../../policies/deployment.ts";
import { canManageProject } from "../../policies/project.ts";
import { deliveryResource, presentDelivery, presentWebhook, webhookResource } from "../../presenters/webhook.ts";
import { checkTargets } from "../deployments/environmentInput.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { projectStateResponses } from "../projectStates.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";

const tags = ["Webhooks"];

const targetUrl = z
  .url({ protocol: /^https?$/, error: "The target url field must be an http or https URL." })
  .max(2048)
  .refine((value) => !URL.canParse(value) || (new URL(value).username === "" && new URL(value).password === ""), {
    error: "The target url field must not hold credentials; use the secret key to authenticate deliveries.",
  });
const secretKeyRule = "The secret key field must be 16 to 256 printable ASCII characters (letters, digits, punctuation or spaces).";
// Printable ASCII only: receivers key the HMAC with the secret's bytes, and a non-ASCII or
// control character would be encoded differently by different languages and tools.
const secretKey = z
  .string({ error: (issue) => (issue.input === undefined ? "The secret key field is required: receivers verify deliveries with it." : secretKeyRule) })
  .regex(/^[\x20-\x7e]{16,256}$/, { error: secretKeyRule });

const createBody = z.object({
  event_type: z.enum(webhookEvents),
  target_url: targetUrl,
  /** The HMAC key of the deliveries' signatures; never answered. */
  secret_key: secretKey,
  is_active: z.boolean().optional(),
  /** Five-field cron expression; required for `scheduled`, refused otherwise. */
  cron: z.string().trim().min(1).max(255).nullable().optional(),
  timezone: z.string().trim().min(1).max(64).optional(),
});

const updateBody = z.object({
  event_type: z.enum(webhookEvents).optional(),
  target_url: targetUrl.optional(),
  /** A new key replaces the stored one (rotation); omitted keeps it. */
  secret_key: secretKey.optional(),
  is_active: z.boolean().optional(),
  cron: z.string().trim().min(1).max(255).nullable().optional(),
  timezone: z.string().trim().min(1).max(64).optional(),
});

const triggerBody = z.object({ code_generation_id: idNumber().optional() });

/** Checks the schedule fields of the webhook as it will be. */
function scheduleErrors(eventType: WebhookRow["event_type"], cron: string | null, timezone: string): FieldErrors {
  const errors: FieldErrors = {};
  const zone = timezoneProblem(timezone);
  if (zone) errors.timezone = [zone];
  if (eventType === "scheduled") {
    if (!cron) errors.cron = ["The cron field is required for scheduled webhooks."];
    else {
      const problem = zone ? null : cronProblem(cron, timezone);
      if (problem) errors.cron = [problem];
    }
  } else if (cron) {
    errors.cron = ["The cron field is only for scheduled webhooks."];
  }
  return errors;
}

/** A webhook the caller may see, with its project. @throws 404, 403 */
async function webhookForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<{ hook: WebhookRow; project: ProjectRow }> {
  const hook = await findWebhook(conn, id);
  if (!hook) throw notFound("Webhook");
  try {
    return { hook, project: await projectForDeploymentRead(conn, hook.project_id, user) };
  } catch (error) {
    if ((error as { status?: number }).status === 404) throw notFound("Webhook");
    throw error;
  }
}

/** A webhook whose project the caller may configure (project row-locked). */
async function webhookForConfig(tx: CommonQueryMethods, id: number, user: UserRow): Promise<WebhookRow> {
  const { hook } = await webhookForRead(tx, id, user);
  await projectForDeploymentConfig(tx, hook.project_id, user);
  return (await findWebhook(tx, id))!;
}

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/webhooks",
  summary: "The outbound webhooks of a project",
  tags,
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "The webhooks", schema: z.object({ webhooks: z.array(webhookResource) }) } },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const project = await projectForDeploymentRead(pool, params.projectId, currentUser(ctx));
    const rows = await pool.any(sql.type(webhookRow)`select ${webhookColumns} from webhooks where project_id = ${project.id} order by id`);
    const fullTarget = canManageProject(currentUser(ctx), project);
    ctx.body = { webhooks: rows.map((row) => presentWebhook(row, { fullTarget })) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/webhooks",
  summary: "Create an outbound webhook",
  description:
    "`secret_key` (16–256 printable ASCII characters) is required, stored encrypted and never answered (`has_secret_key` says it is set). Deliveries are POSTs of `{event, project_id, code_generation_id, timestamp, signature}` with header `X-Signature-256: sha256=<hex>` (see the README for the signature).",
  tags,
  auth: "bearer",
  params: projectParams,
  body: createBody,
  responses: { ...projectStateResponses,
    201: { description: "Created", schema: z.object({ message: z.string(), webhook: webhookResource }) },
  },
  handler: async (ctx, { params, body }) => {
    const { pool, config } = ctx.deps;
    const user = currentUser(ctx);
    await projectForDeploymentRead(pool, params.projectId, user);
    const timezone = body.timezone ?? "UTC";
    const cron = body.cron ?? null;
    const errors = { ...scheduleErrors(body.event_type, cron, timezone), ...(await checkTargets({ target_url: body.target_url }, config)) };
    if (Object.keys(errors).length) throw invalid(errors);
    const hook = await pool.transaction(async (tx) => {
      const project = await projectForDeploymentConfig(tx, params.projectId, user);
      return tx.one(sql.type(webhookRow)`
        insert into webhooks (project_id, event_type, target_url, secret_key_sealed, is_active, cron, timezone, user_id)
        values (${project.id}, ${body.event_type}, ${body.target_url}, ${sql.binary(seal(config.appKey, body.secret_key))},
          ${body.is_active ?? true}, ${cron}, ${timezone}, ${user.id})
        returning ${webhookColumns}`);
    });
    ctx.status = 201;
    ctx.body = { message: "Webhook created.", webhook: presentWebhook(hook, { fullTarget: true }) };
  },
});

const show = defineRoute({
  method: "get",
  path: "/webhooks/{id}",
  summary: "One outbound webhook",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The webhook", schema: z.object({ webhook: webhookResource }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const { hook, project } = await webhookForRead(ctx.deps.pool, params.id, user);
    ctx.body = { webhook: presentWebhook(hook, { fullTarget: canManageProject(user, project) }) };
  },
});

/** Scheme, host and port of a URL (what decides who receives the signed deliveries). */
const urlOrigin = (url: string) => {
  try {
    return new URL(url).origin.toLowerCase();
  } catch {
    return url;
  }
};

const update = defineRoute({
  method: "put",
  path: "/webhooks/{id}",
  summary: "Update an outbound webhook",
  description: "Omitted fields keep their values; a new `secret_key` replaces the old one (rotation; never answered) and is required when `target_url` moves to another host. Setting `is_active` to true reactivates a deactivated webhook and resets its failure count.",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: z.object({ message: z.string(), webhook: webhookResource }) } },
  handler: async (ctx, { params, body }) => {
    const { pool, config } = ctx.deps;
    const user = currentUser(ctx);
    const { hook: current } = await webhookForRead(pool, params.id, user);
    const eventType = body.event_type ?? current.event_type;
    const timezone = body.timezone ?? current.timezone;
    const cron = body.cron !== undefined ? body.cron : eventType === "scheduled" ? current.cron : null;
    const errors = {
      ...scheduleErrors(eventType, cron, timezone),
      ...(body.target_url ? await checkTargets({ target_url: body.target_url }, config) : {}),
      // The secret signs what the receiver trusts: it is not handed to another host unasked.
      ...(body.target_url && body.secret_key === undefined && urlOrigin(body.target_url) !== urlOrigin(current.target_url)
        ? { secret_key: ["The secret key field is required when the target changes: a stored secret is only used for the host it was entered for."] }
        : {}),
    };
    if (Object.keys(errors).length) throw invalid(errors);
    const hook = await pool.transaction(async (tx) => {
      const locked = await webhookForConfig(tx, params.id, user);
      const sets = [
        sql.fragment`event_type = ${eventType}`,
        sql.fragment`cron = ${cron}`,
        sql.fragment`timezone = ${timezone}`,
        sql.fragment`updated_at = now()`,
      ];
      if (body.target_url !== undefined) sets.push(sql.fragment`target_url = ${body.target_url}`);
      if (body.secret_key !== undefined) sets.push(sql.fragment`secret_key_sealed = ${sql.binary(seal(config.appKey, body.secret_key))}`);
      if (body.is_active === true && !locked.is_active) sets.push(sql.fragment`is_active = true, consecutive_failures = 0, deactivated_at = null`);
      if (body.is_active === false) sets.push(sql.fragment`is_active = false`);
      return tx.one(sql.type(webhookRow)`update webhooks set ${sql.join(sets, sql.fragment`, `)} where id = ${locked.id} returning ${webhookColumns}`);
    });
    ctx.body = { message: "Webhook updated.", webhook: presentWebhook(hook, { fullTarget: true }) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/webhooks/{id}",
  summary: "Delete an outbound webhook",
  description: "Its delivery log goes with it; queued deliveries are dropped.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: z.object({ message: z.string() }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const hook = await webhookForConfig(tx, params.id, user);
      await tx.query(sql.type(ignoredRow)`delete from webhooks where id = ${hook.id}`);
    });
    ctx.body = { message: "Webhook deleted." };
  },
});

const deliveries = defineRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries",
  summary: "The delivery log of a webhook, newest first",
  tags,
  auth: "bearer",
  params: idParams,
  query: paginationQuery,
  responses: { 200: { description: "A page of deliveries", schema: paginatedSchema(deliveryResource) } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const { hook } = await webhookForRead(pool, params.id, currentUser(ctx));
    const [rows, total] = await Promise.all([
      pool.any(sql.type(deliveryRow)`select ${deliveryColumns} from webhook_deliveries where webhook_id = ${hook.id} order by id desc ${pageFragment(query)}`),
      pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from webhook_deliveries where webhook_id = ${hook.id}`),
    ]);
    ctx.body = paginated(rows.map(presentDelivery), total, query, new URL(ctx.href));
  },
});

const trigger = defineRoute({
  method: "post",
  path: "/webhooks/{id}/trigger",
  summary: "Deliver a webhook now (manual_trigger)",
  description:
    "Queues one delivery with event `manual_trigger` for the given `code_generation_id` of the project, or its newest generation. Any active webhook can be triggered (to test a receiver too). Needs the right to deploy in the project.",
  tags,
  auth: "bearer",
  params: idParams,
  body: triggerBody,
  responses: { ...projectStateResponses, 202: { description: "Queued", schema: z.object({ message: z.string(), delivery: deliveryResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    // The delivery as queued here: read in the same transaction, so the answer never races the worker.
    const row = await pool.transaction(async (tx) => {
      const { hook } = await webhookForRead(tx, params.id, user);
      await projectForDeploy(tx, hook.project_id, user);
      if (!hook.is_active) throw conflict("The webhook is inactive; activate it first.", "webhook_inactive");
      let generation: number | null;
      if (body.code_generation_id !== undefined) {
        const owner = await tx.maybeOneFirst(sql.type(z.object({ project_id: z.number() }))`select project_id from code_generations where id = ${body.code_generation_id}`);
        if (owner !== hook.project_id) throw invalidField("code_generation_id", "The selected code generation does not exist in this project.");
        generation = body.code_generation_id;
      } else {
        generation = await latestGeneration(tx, hook.project_id);
      }
      const deliveryId = (await scheduleDelivery(tx, hook, `manual:${randomUUID()}`, {
        event: "manual_trigger",
        project_id: hook.project_id,
        code_generation_id: generation,
        timestamp: new Date().toISOString(),
      }))!;
      return tx.one(sql.type(deliveryRow)`select ${deliveryColumns} from webhook_deliveries where id = ${deliveryId}`);
    });
    ctx.status = 202;
    ctx.body = { message: "Delivery queued.", delivery: presentDelivery(row) };
  },
});

export const webhookRoutes = [list, create, show, update, remove, deliveries, trigger];
