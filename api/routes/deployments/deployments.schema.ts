import { z } from "zod";
import { environmentTypes } from "../../../shared/deployments/environments.ts";
import { logTypes } from "../../../shared/deployments/logs.ts";
import { deploymentMethods } from "../../../shared/deployments/targetConfigs.ts";
import { jobResource } from "../jobs/jobs.schema.ts";
import { deploymentResource } from "../../presenters/deployment.ts";
import { idNumber, wholeNumber } from "../../../shared/canonicalNumbers.ts";

/**
 * Both request forms of the spec: `project_id`, `deployment_method` and
 * `target_environment` (the project's environment of that type with a config for the
 * method, the default one first), or `environment_id` (with `deployment_method` when the
 * environment has configs for several methods).
 */
export const createDeploymentBody = z
  .object({
    code_generation_id: idNumber(),
    project_id: idNumber().optional(),
    environment_id: idNumber().optional(),
    deployment_method: z.enum(deploymentMethods).optional(),
    target_environment: z.enum(environmentTypes).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.environment_id !== undefined) return;
    if (body.project_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["environment_id"], message: "The environment id field is required when project id is not present." });
      return;
    }
    if (!body.deployment_method) ctx.addIssue({ code: "custom", path: ["deployment_method"], message: "The deployment method field is required with project id." });
    if (!body.target_environment) ctx.addIssue({ code: "custom", path: ["target_environment"], message: "The target environment field is required with project id." });
  });

export const rollbackBody = z.object({ rollback_to: idNumber() });

/** `type=warning,error` or `type=error&type=warning`: one or more log types. */
const logTypeFilter = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(",")).map((part) => part.trim()).filter(Boolean))
  .pipe(z.array(z.enum(logTypes, { error: `The type must be one of ${logTypes.join(", ")}.` })).max(logTypes.length * 4));

export const logsQuery = z.object({
  /** Only rows after this id (to poll for what is new, or resume a live view after reconnecting). */
  after_id: wholeNumber({ min: 0 }).optional(),
  /** Only rows of these types (comma-separated or repeated). */
  type: logTypeFilter.optional(),
});

/** The answer of execute, retry and rollback: the deployment and the job that runs it. */
export const startedResponse = z.object({ message: z.string(), deployment: deploymentResource, job: jobResource });
