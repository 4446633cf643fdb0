/**
 * Turns an environment request body into column assignments: each given config validated
 * (merged with the stored one on update), its hosts checked by the network guard, a git
 * connection it names checked to be the writer's own and for its provider, its secrets sealed. Every problem is collected into one 422 field map.
 */
import type { Config } from "../../../shared/config.ts";
import { seal } from "../../../shared/crypto.ts";
import { sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { checkGitConnection } from "../../../shared/deployments/gitConnection.ts";
import type { StoredConfig } from "../../../shared/deployments/targetConfigs.ts";
import { prepareConfig, targetsOf, type DeploymentMethod } from "../../../shared/deployments/targetConfigs.ts";
import { invalid, type FieldErrors } from "../../../shared/errors.ts";
import { assertPublicHost, hostOf, NetworkTargetError, networkPolicy } from "../../../shared/net/networkGuard.ts";
import type { EnvironmentInput } from "./environments.schema.ts";

type Fragment = ReturnType<typeof sql.fragment>;

/** Column name → SQL value, ready for an insert or an update. */
export type Assignments = Map<string, Fragment>;

/**
 * Refuses hosts the network guard refuses (loopback, private, metadata unless allowed), and
 * text that is no host name at all (`user@host`, a path, a space), which no connection could
 * use. Names that do not resolve are accepted here: DNS may not know them yet, and every
 * connection is checked again when it is opened.
 */
export async function checkTargets(targets: Record<string, string>, config: Config): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  const policy = networkPolicy(config);
  await Promise.all(
    Object.entries(targets).map(async ([field, target]) => {
      try {
        hostOf(target);
      } catch {
        errors[field] = [`${JSON.stringify(target)} is not a host name or IP address (a user goes in username, a folder in remote_path).`];
        return;
      }
      try {
        await assertPublicHost(target, policy);
      } catch (error) {
        if (error instanceof NetworkTargetError) errors[field] = [error.message];
      }
    }),
  );
  return errors;
}

/**
 * The configs part of an environment body as column assignments.
 * @throws 422 with every field at fault.
 */
export async function configAssignments(
  input: EnvironmentInput,
  stored: Record<DeploymentMethod, StoredConfig> | null,
  config: Config,
  writer: { conn: CommonQueryMethods; userId: number },
): Promise<Assignments> {
  const assignments: Assignments = new Map();
  const errors: FieldErrors = {};
  for (const method of ["ftp", "ssh", "git"] as const) {
    const given = input[`${method}_config`];
    if (given === undefined) continue;
    if (given === null) {
      assignments.set(`${method}_config`, sql.fragment`null`);
      for (const column of columnsOf(method)) assignments.set(column, sql.fragment`null`);
      if (method === "ssh") {
        assignments.set("ssh_host_key_fingerprint", sql.fragment`null`);
        assignments.set("ssh_host_key_pinned_at", sql.fragment`null`);
      }
      continue;
    }
    const result = prepareConfig(method, given, stored?.[method] ?? null);
    Object.assign(errors, result.errors);
    if (!result.prepared) continue;
    Object.assign(errors, await checkTargets(targetsOf(method, result.prepared.public), config));
    if (method === "git") Object.assign(errors, await checkGitConnection(writer.conn, writer.userId, result.prepared.public));
    assignments.set(`${method}_config`, sql.fragment`${sql.jsonb(result.prepared.public)}`);
    for (const [column, value] of Object.entries(result.prepared.secrets)) {
      assignments.set(column, value === null ? sql.fragment`null` : sql.fragment`${sql.binary(seal(config.appKey, value))}`);
    }
    if (method === "ssh") {
      const pin = result.hostKeyFingerprint ?? null;
      const unchanged = pin !== null && pin === stored?.ssh.hostKeyFingerprint;
      assignments.set("ssh_host_key_fingerprint", sql.fragment`${pin}`);
      if (!unchanged) assignments.set("ssh_host_key_pinned_at", pin === null ? sql.fragment`null` : sql.fragment`now()`);
    }
  }
  if (Object.keys(errors).length) throw invalid(errors);
  return assignments;
}

function columnsOf(method: DeploymentMethod): string[] {
  if (method === "ftp") return ["ftp_password_sealed"];
  if (method === "ssh") return ["ssh_password_sealed", "ssh_private_key_sealed"];
  return ["git_access_token_sealed", "git_app_password_sealed"];
}
