/**
 * Deployment environments in the database: the row as the API presents it (secrets only as
 * "has" flags), the opened secrets for the worker, and the deployer target of a method.
 */
import { z } from "zod";
import { openText } from "../crypto.ts";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { DeployError } from "../deploy/errors.ts";
import type { DeployTarget } from "../deploy/index.ts";
import type { HostKeyPinner } from "../deploy/types.ts";
import type { FtpConfig, GitConfig, SshConfig } from "../deploy/configs.ts";
import { assembleConfig, type DeploymentMethod, type StoredConfig } from "./targetConfigs.ts";

export const environmentTypes = ["development", "staging", "production"] as const;
export type EnvironmentType = (typeof environmentTypes)[number];

const jsonObject = z.record(z.string(), z.unknown()).nullable();

export const environmentRow = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  type: z.enum(environmentTypes),
  is_default: z.boolean(),
  ftp_config: jsonObject,
  ssh_config: jsonObject,
  git_config: jsonObject,
  has_ftp_password: z.boolean(),
  has_ssh_password: z.boolean(),
  has_ssh_private_key: z.boolean(),
  has_git_access_token: z.boolean(),
  has_git_app_password: z.boolean(),
  ssh_host_key_fingerprint: z.string().nullable(),
  ssh_host_key_pinned_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type EnvironmentRow = z.infer<typeof environmentRow>;

/** Select list of `environmentRow` over `environments e`. */
export const environmentSelect = sql.fragment`
  select e.id, e.project_id, e.name, e.type, e.is_default, e.ftp_config, e.ssh_config, e.git_config,
    e.ftp_password_sealed is not null as has_ftp_password,
    e.ssh_password_sealed is not null as has_ssh_password,
    e.ssh_private_key_sealed is not null as has_ssh_private_key,
    e.git_access_token_sealed is not null as has_git_access_token,
    e.git_app_password_sealed is not null as has_git_app_password,
    e.ssh_host_key_fingerprint, e.ssh_host_key_pinned_at, e.created_at, e.updated_at
  from environments e`;

/** One environment, or null. */
export async function findEnvironment(conn: CommonQueryMethods, id: number): Promise<EnvironmentRow | null> {
  return conn.maybeOne(sql.type(environmentRow)`${environmentSelect} where e.id = ${id}`);
}

/** The methods an environment has a config for. */
export function methodsOf(env: Pick<EnvironmentRow, "ftp_config" | "ssh_config" | "git_config">): DeploymentMethod[] {
  return (["ftp", "ssh", "git"] as const).filter((method) => env[`${method}_config`] !== null);
}

const sealedRow = z.object({
  ftp_password_sealed: z.instanceof(Buffer).nullable(),
  ssh_password_sealed: z.instanceof(Buffer).nullable(),
  ssh_private_key_sealed: z.instanceof(Buffer).nullable(),
  git_access_token_sealed: z.instanceof(Buffer).nullable(),
  git_app_password_sealed: z.instanceof(Buffer).nullable(),
});

/** The opened secrets of an environment by method and field. */
export type EnvironmentSecrets = Record<DeploymentMethod, Record<string, string | undefined>>;

/** Reads and opens the sealed secrets of environment `id` (all undefined when it has none). */
export async function openEnvironmentSecrets(conn: CommonQueryMethods, appKey: Buffer, id: number): Promise<EnvironmentSecrets> {
  const row = await conn.maybeOne(sql.type(sealedRow)`
    select ftp_password_sealed, ssh_password_sealed, ssh_private_key_sealed, git_access_token_sealed, git_app_password_sealed
    from environments where id = ${id}`);
  const open = (value: Buffer | null | undefined) => (value ? openText(appKey, value) : undefined);
  return {
    ftp: { password: open(row?.ftp_password_sealed) },
    ssh: { password: open(row?.ssh_password_sealed), private_key: open(row?.ssh_private_key_sealed) },
    git: { access_token: open(row?.git_access_token_sealed), app_password: open(row?.git_app_password_sealed) },
  };
}

/** What `prepareConfig` needs to merge an update with the stored configs. */
export function storedConfigs(env: EnvironmentRow, secrets: EnvironmentSecrets): Record<DeploymentMethod, StoredConfig> {
  return {
    ftp: { public: env.ftp_config, secrets: secrets.ftp },
    ssh: { public: env.ssh_config, secrets: secrets.ssh, hostKeyFingerprint: env.ssh_host_key_fingerprint },
    git: { public: env.git_config, secrets: secrets.git },
  };
}

/**
 * The deployer target of `method` on an environment: its stored config with the secrets
 * put back and, for SSH, the pinned host key.
 * @throws Error when the environment has no config for `method` (callers check first).
 */
export function deployTargetOf(env: EnvironmentRow, secrets: EnvironmentSecrets, method: DeploymentMethod): DeployTarget {
  const publicPart = env[`${method}_config`];
  if (!publicPart) throw new Error(`Environment ${env.id} has no ${method} configuration`);
  const config = assembleConfig(publicPart, secrets[method]);
  if (method === "ssh") return { method, config: { ...config, host_key_fingerprint: env.ssh_host_key_fingerprint } as SshConfig };
  if (method === "ftp") return { method, config: config as FtpConfig };
  return { method, config: config as GitConfig };
}

const fingerprintRow = z.object({ fingerprint: z.string().nullable() });
const bare = (fingerprint: string) => fingerprint.replace(/=+$/, "");

/** The SSH server an environment's stored config names (what a pin is for), or null. */
const sshServerOf = (config: Record<string, unknown> | null): { host: string; port: string } | null =>
  config && typeof config.host === "string" ? { host: config.host, port: typeof config.port === "number" ? String(config.port) : "22" } : null;

/**
 * Pins `fingerprint` as environment `id`'s SSH host key unless one is pinned already: the
 * write only fills an empty pin, so two first connections racing each other never overwrite
 * one another. A deleted environment has nothing to pin, and neither has one whose SSH config
 * no longer names `server`, the server that presented the key (a manager moved it while the
 * connection was being made): the old server's key would block every connection to the new one.
 * @throws DeployError `host_key_mismatch` when a different key was pinned meanwhile (by a
 * concurrent connection test or deployment); the caller then stops before moving any file.
 */
export async function pinHostKey(conn: CommonQueryMethods, id: number, fingerprint: string, server: { host: string; port: string }): Promise<void> {
  const sameServer = sql.fragment`ssh_config->>'host' = ${server.host} and coalesce(ssh_config->>'port', '22') = ${server.port}`;
  const set = await conn.maybeOne(sql.type(fingerprintRow)`
    update environments set ssh_host_key_fingerprint = ${fingerprint}, ssh_host_key_pinned_at = now(), updated_at = now()
    where id = ${id} and ssh_host_key_fingerprint is null and ${sameServer}
    returning ssh_host_key_fingerprint as fingerprint`);
  if (set) return;
  // A separate statement: it sees the pin that made the update skip the row.
  const current = await conn.maybeOneFirst(sql.type(fingerprintRow)`select ssh_host_key_fingerprint as fingerprint from environments where id = ${id} and ${sameServer}`);
  if (current && bare(current) !== bare(fingerprint)) {
    throw new DeployError(
      "host_key_mismatch",
      `Another connection pinned the SSH host key ${current} for this environment while this one was presented ${fingerprint}; it was stopped before moving any file. Check the server's key; if it was replaced on purpose, clear the pinned host key and try again.`,
      { expected_fingerprint: current, presented_fingerprint: fingerprint },
    );
  }
}

/** The pinner of an environment for deployers and connection tests: for the SSH server its config named when it was read. */
export const hostKeyPinnerOf = (conn: CommonQueryMethods, env: Pick<EnvironmentRow, "id" | "ssh_config">): HostKeyPinner => {
  const server = sshServerOf(env.ssh_config);
  return async (fingerprint) => {
    if (server) await pinHostKey(conn, env.id, fingerprint, server);
  };
};
