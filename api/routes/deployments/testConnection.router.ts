/**
 * POST /deployments/test-connection (DESIGN §11): connects and authenticates to a stored
 * environment's target or to an inline config, and reports `{ok, message}` (failures are
 * answers, not errors). Inline hosts pass the network guard before anything is dialled, and
 * every connection is checked again when it is opened. Testing a stored environment's SSH
 * config pins the server's host key when none is pinned yet (the first successful login);
 * an inline config has no environment to pin to.
 */
import { z } from "zod";
import { deployTargetOf, hostKeyPinnerOf, openEnvironmentSecrets } from "../../../shared/deployments/environments.ts";
import { deploymentMethods, prepareConfig, targetsOf, assembleConfig, type DeploymentMethod } from "../../../shared/deployments/targetConfigs.ts";
import { testConnection, type DeployTarget } from "../../../shared/deploy/index.ts";
import { DeployError } from "../../../shared/deploy/errors.ts";
import { checkGitConnection, withConnectionToken } from "../../../shared/deployments/gitConnection.ts";
import type { HostKeyPinner } from "../../../shared/deploy/types.ts";
import { invalid, invalidField } from "../../../shared/errors.ts";
import { networkPolicy } from "../../../shared/net/networkGuard.ts";
import { currentUser } from "../../context.ts";
import { projectForDeploymentConfig } from "../../policies/deployment.ts";
import { defineRoute } from "../route.ts";
import { checkTargets } from "./environmentInput.ts";
import { environmentForRead } from "./environments.router.ts";
import { methodFor } from "./methods.ts";
import { projectStateResponses } from "../projectStates.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";

/** How long a connection test may take. */
const TEST_TIMEOUT_MS = 30_000;

const configInput = z.record(z.string(), z.unknown()).optional();

const body = z.object({
  environment_id: idNumber().optional(),
  deployment_method: z.enum(deploymentMethods).optional(),
  ftp_config: configInput,
  ssh_config: configInput,
  git_config: configInput,
});

const resultSchema = z.object({
  ok: z.boolean(),
  message: z.string(),
  code: z.string().nullable(),
  host_key_fingerprint: z.string().nullable(),
});

/** The one inline config of a request, or a 422 saying what is missing. */
function inlineMethod(input: z.infer<typeof body>): DeploymentMethod {
  const given = deploymentMethods.filter((method) => input[`${method}_config`] !== undefined);
  if (input.deployment_method) {
    if (!given.includes(input.deployment_method)) throw invalidField(`${input.deployment_method}_config`, `The ${input.deployment_method} config field is required.`);
    return input.deployment_method;
  }
  if (given.length === 1) return given[0]!;
  if (given.length === 0) throw invalidField("environment_id", "Give an environment id, or one of ftp_config, ssh_config or git_config.");
  throw invalidField("deployment_method", "The deployment method field is required when several configs are given.");
}

const route = defineRoute({
  method: "post",
  path: "/deployments/test-connection",
  summary: "Test the connection to a deployment target",
  description:
    "Either `environment_id` (plus `deployment_method` when it has several configs; needs the right to manage its project) or one inline `ftp_config`, `ssh_config` or `git_config` with the spec's fields. Answers `ok` and a message; SSH answers the server's host key fingerprint too, and a stored environment's test pins it when none is pinned yet.",
  tags: ["Deployments"],
  auth: "bearer",
  body,
  responses: { ...projectStateResponses,
    200: { description: "The outcome of the test", schema: resultSchema },
    403: { description: "The caller sees the environment but may not configure its project's deployments" },
    404: { description: "The environment is not visible to the caller" },
  },
  handler: async (ctx, { body: input }) => {
    const { pool, config } = ctx.deps;
    const user = currentUser(ctx);
    let target: DeployTarget;
    let pinHostKey: HostKeyPinner | undefined;
    let projectId: number | undefined;
    if (input.environment_id !== undefined) {
      const env = await environmentForRead(pool, input.environment_id, user);
      // Testing sends the stored secrets and pins a host key (a write): the right to configure deployments (policy).
      await pool.transaction((tx) => projectForDeploymentConfig(tx, env.project_id, user));
      const method = methodFor(env, input.deployment_method);
      target = deployTargetOf(env, await openEnvironmentSecrets(pool, config.appKey, env.id), method);
      pinHostKey = hostKeyPinnerOf(pool, env);
      projectId = env.project_id;
    } else {
      const method = inlineMethod(input);
      const prepared = prepareConfig(method, input[`${method}_config`], null);
      if (!prepared.prepared) throw invalid(prepared.errors);
      const hostErrors = await checkTargets(targetsOf(method, prepared.prepared.public), config);
      if (Object.keys(hostErrors).length) throw invalid(hostErrors);
      const secrets = Object.fromEntries(
        Object.entries(input[`${method}_config`] ?? {}).filter(([field, value]) => ["password", "private_key", "access_token", "app_password"].includes(field) && typeof value === "string"),
      ) as Record<string, string>;
      const full = assembleConfig(prepared.prepared.public, secrets);
      if (method === "ssh" && prepared.hostKeyFingerprint) full.host_key_fingerprint = prepared.hostKeyFingerprint;
      target = { method, config: full } as DeployTarget;
    }
    if (target.method === "git" && input.environment_id === undefined) {
      // An inline config may name only the caller's own connection.
      const refused = await checkGitConnection(pool, user.id, target.config);
      if (Object.keys(refused).length) throw invalid(refused);
    }
    try {
      target = await withConnectionToken(pool, config, target, projectId);
    } catch (error) {
      if (!(error instanceof DeployError)) throw error;
      ctx.body = { ok: false, message: error.message, code: error.code, host_key_fingerprint: null };
      return;
    }
    const result = await testConnection(target, { network: networkPolicy(config), signal: AbortSignal.timeout(TEST_TIMEOUT_MS), ...(pinHostKey ? { pinHostKey } : {}) });
    ctx.body = { ok: result.ok, message: result.message, code: result.code ?? null, host_key_fingerprint: result.hostKeyFingerprint ?? null };
  },
});

export const testConnectionRoutes = [route];
