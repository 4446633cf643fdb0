/**
 * Which deployment method a request means for an environment.
 */
import type { EnvironmentRow } from "../../../shared/deployments/environments.ts";
import { methodsOf } from "../../../shared/deployments/environments.ts";
import type { DeploymentMethod } from "../../../shared/deployments/targetConfigs.ts";
import { invalidField } from "../../../shared/errors.ts";

/** The environment and method a request of the `environment_id` form names. @throws 422 */
export function methodFor(env: EnvironmentRow, requested: DeploymentMethod | undefined): DeploymentMethod {
  const available = methodsOf(env);
  if (requested) {
    if (!available.includes(requested)) invalidThrow("deployment_method", `The environment "${env.name}" has no ${requested.toUpperCase()} configuration.`);
    return requested;
  }
  if (available.length === 1) return available[0]!;
  if (available.length === 0) invalidThrow("environment_id", `The environment "${env.name}" has no FTP, SSH or git configuration.`);
  return invalidThrow("deployment_method", `The deployment method field is required: the environment has configurations for ${available.join(", ")}.`);
}

function invalidThrow(field: string, message: string): never {
  throw invalidField(field, message);
}

