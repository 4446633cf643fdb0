/**
 * The FTP, SSH and git configs of an environment as the API receives them, validated with
 * the deployers' own schemas (shared/deploy/configs.ts), then split into what is stored in
 * the clear (jsonb) and the secrets, which are sealed into columns of their own.
 *
 * Update rules: a config that is omitted stays as it is; `null` removes it with its
 * secrets; a config that is given replaces the stored one, except that a secret it omits
 * keeps its stored value (so clients can edit a host without re-typing the password) and a
 * secret given as `null` is removed; an FTP config keeps its stored `secure` when it omits it,
 * and turning `secure` off needs the password again (ftpTransport.ts). A stored secret is only kept for the target it was
 * entered for: when a field that decides where it is sent changes (`host`, `port`,
 * `username`; a git config's provider, `gitlab_url` or `api_url`), the request must give the
 * secret again, else 422 "required when the target changes" (SSH: giving one of password
 * and key drops the other).
 */
import { z } from "zod";
import {
  bitbucketConfigSchema,
  detectGitProvider,
  ftpConfigSchema,
  gitConnectionConfigSchemas,
  githubConfigSchema,
  gitlabConfigSchema,
  sshConfigSchema,
  type GitProvider,
} from "../deploy/configs.ts";
import type { FieldErrors } from "../errors.ts";
import { fieldErrors } from "../validation.ts";
import { keepFtpTransport } from "./ftpTransport.ts";

/** Deployment methods of the spec. */
export const deploymentMethods = ["ftp", "ssh", "git"] as const;
export type DeploymentMethod = (typeof deploymentMethods)[number];

/** The secret fields of each method's config and the column that holds each, sealed. */
export const secretColumns = {
  ftp: { password: "ftp_password_sealed" },
  ssh: { password: "ssh_password_sealed", private_key: "ssh_private_key_sealed" },
  git: { access_token: "git_access_token_sealed", app_password: "git_app_password_sealed" },
} as const;

export type SecretColumn = "ftp_password_sealed" | "ssh_password_sealed" | "ssh_private_key_sealed" | "git_access_token_sealed" | "git_app_password_sealed";

/** Which secret fields a git provider uses. */
const gitSecretOf: Record<GitProvider, "access_token" | "app_password"> = { github: "access_token", gitlab: "access_token", bitbucket: "app_password" };

const gitSchemas = { github: githubConfigSchema, gitlab: gitlabConfigSchema, bitbucket: bitbucketConfigSchema } as const;

/** SSH host key fingerprints as `ssh-keygen -lf` prints them. */
const fingerprint = z
  .string()
  .trim()
  .regex(/^SHA256:[A-Za-z0-9+/]{43}=?$/, { error: "The host key fingerprint must look like SHA256:<43 base64 characters>." });

/** What is stored of one method's config: its public fields and its secrets (plain, to be sealed). */
export interface PreparedConfig {
  public: Record<string, unknown>;
  /** Secret field → value to seal, or null to clear the column. */
  secrets: Partial<Record<SecretColumn, string | null>>;
}

/** What an environment has stored of one method, as `prepareConfig` needs it for a merge. */
export interface StoredConfig {
  public: Record<string, unknown> | null;
  /** Opened secrets by field name (`password`, `private_key`, …). */
  secrets: Record<string, string | undefined>;
  /** SSH only: the pinned host key. */
  hostKeyFingerprint?: string | null;
}

/** The result of preparing a config: the parts to store, the pin (SSH) and field errors. */
export interface PrepareResult {
  prepared: PreparedConfig | null;
  /** SSH: the host key pin after this change (undefined when the config is not SSH). */
  hostKeyFingerprint?: string | null;
  errors: FieldErrors;
}

const asObject = (value: unknown): Record<string, unknown> | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** Fields of each method whose change sends a stored secret somewhere else, with their defaults. */
const targetFields: Record<DeploymentMethod, Record<string, unknown>> = {
  ftp: { host: undefined, port: 21, username: undefined },
  ssh: { host: undefined, port: 22, username: undefined },
  git: { gitlab_url: undefined, api_url: undefined },
};

const targetValue = (value: unknown, fallback: unknown) => {
  const given = value === undefined || value === null || value === "" ? fallback : value;
  return typeof given === "string" ? given.trim().toLowerCase().replace(/\/+$/, "") : typeof given === "number" ? String(given) : given;
};

/** Whether `input` points a stored config's secrets at another target. */
export function targetMoved(method: DeploymentMethod, stored: Record<string, unknown> | null, input: Record<string, unknown>): boolean {
  if (!stored) return false;
  return Object.entries(targetFields[method]).some(([field, fallback]) => targetValue(stored[field], fallback) !== targetValue(input[field], fallback));
}

const requiredAgain = (field: string) => `The ${field.replace(/_/g, " ")} field is required when the target changes: a stored secret is only sent to the target it was entered for.`;

/** Takes a secret from the input, or the stored one when the input omits it. */
function secretValue(input: Record<string, unknown>, field: string, stored: StoredConfig | null): unknown {
  if (field in input) return input[field];
  return stored?.secrets[field];
}

/**
 * Validates `input` (the `ftp_config`, `ssh_config` or `git_config` of a request) merged
 * with what is stored, and splits it for storage. Field errors are keyed
 * `<method>_config.<field>`.
 */
export function prepareConfig(method: DeploymentMethod, input: unknown, stored: StoredConfig | null): PrepareResult {
  const key = `${method}_config`;
  const object = asObject(input);
  if (!object) return { prepared: null, errors: { [key]: [`The ${key.replace("_", " ")} field must be an object.`] } };
  if (method === "git") return prepareGit(object, stored);

  const secretFields = Object.keys(secretColumns[method]);
  const errors: FieldErrors = {};
  // Secrets stored for another target are not carried over: given again, or refused.
  const moved = targetMoved(method, stored?.public ?? null, object);
  const carried = moved ? null : stored;
  if (moved) {
    const givenOne = secretFields.some((field) => typeof object[field] === "string" && object[field] !== "");
    for (const field of secretFields) {
      if (!(field in object) && stored?.secrets[field] !== undefined && !givenOne) errors[`${key}.${field}`] = [requiredAgain(field)];
    }
    if (Object.keys(errors).length) return { prepared: null, errors };
  }
  const merged: Record<string, unknown> = { ...object };
  for (const field of secretFields) {
    const value = secretValue(object, field, carried);
    if (value === undefined || value === null) delete merged[field];
    else merged[field] = value;
  }
  if (method === "ftp") Object.assign(errors, keepFtpTransport(object, stored, merged));
  let hostKeyFingerprint: string | null | undefined;
  if (method === "ssh") {
    delete merged.host_key_fingerprint;
    if ("host_key_fingerprint" in object && object.host_key_fingerprint !== null) {
      const pin = fingerprint.safeParse(object.host_key_fingerprint);
      if (pin.success) hostKeyFingerprint = pin.data;
      else Object.assign(errors, fieldErrors(pin.error, [key, "host_key_fingerprint"]));
    } else if ("host_key_fingerprint" in object) {
      hostKeyFingerprint = null;
    } else {
      // A different server means a different key: the pin of the old one would only block it.
      const sameServer = stored?.public && stored.public.host === object.host && Number(stored.public.port ?? 22) === Number(object.port ?? 22);
      hostKeyFingerprint = sameServer ? (stored.hostKeyFingerprint ?? null) : null;
    }
  }
  const parsed = (method === "ftp" ? ftpConfigSchema : sshConfigSchema).safeParse(merged);
  if (!parsed.success) Object.assign(errors, fieldErrors(parsed.error, [key]));
  if (!parsed.success || Object.keys(errors).length) return { prepared: null, errors };

  const publicPart: Record<string, unknown> = { ...parsed.data };
  const secrets: PreparedConfig["secrets"] = {};
  for (const [field, column] of Object.entries(secretColumns[method]) as [string, SecretColumn][]) {
    const value = publicPart[field];
    delete publicPart[field];
    secrets[column] = typeof value === "string" && value !== "" ? value : null;
  }
  delete publicPart.host_key_fingerprint;
  return { prepared: { public: publicPart, secrets }, errors, ...(method === "ssh" ? { hostKeyFingerprint } : {}) };
}

/** Fields a git connection decides (its token and its host), per provider. */
const connectionDecides: Record<GitProvider, string[]> = {
  github: ["access_token", "api_url"],
  gitlab: ["access_token", "gitlab_url"],
  bitbucket: ["username", "app_password", "api_url"],
};
const connectionId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * A git config that names one of the caller's git connections (`connection_id`) instead of a
 * pasted token: the repository fields as usual, no secret and no host (the connection's
 * token and instance are used; whether the connection exists, is the caller's and is for
 * this provider is checked against the database by the caller of prepareConfig).
 */
function prepareGitConnection(object: Record<string, unknown>, provider: GitProvider): PrepareResult {
  const errors: FieldErrors = {};
  const id = connectionId.safeParse(object.connection_id);
  if (!id.success) errors["git_config.connection_id"] = ["The connection id must be the id of one of your git connections."];
  for (const field of [...connectionDecides[provider], "access_token", "app_password"]) {
    if (object[field] !== undefined && object[field] !== null) errors[`git_config.${field}`] = [`The ${field.replace(/_/g, " ")} comes from the git connection; leave it out.`];
  }
  const parsed = gitConnectionConfigSchemas[provider].safeParse({ ...object, provider });
  if (!parsed.success) Object.assign(errors, fieldErrors(parsed.error, ["git_config"]));
  if (!parsed.success || !id.success || Object.keys(errors).length) return { prepared: null, errors };
  return {
    prepared: { public: { ...parsed.data, provider, connection_id: id.data }, secrets: { git_access_token_sealed: null, git_app_password_sealed: null } },
    errors: {},
  };
}

function prepareGit(input: Record<string, unknown>, stored: StoredConfig | null): PrepareResult {
  // Only the service sets how a token is sent (a connection's token is OAuth).
  const { token_type: _tokenType, ...object } = input;
  const provider = detectGitProvider(object);
  if (!provider) {
    return {
      prepared: null,
      errors: { "git_config.provider": ["Give owner and repo (GitHub), project_id (GitLab) or workspace and repo (Bitbucket), or a provider."] },
    };
  }
  if (object.connection_id !== undefined && object.connection_id !== null) return prepareGitConnection(object, provider);
  delete object.connection_id;
  const secretField = gitSecretOf[provider];
  const storedProvider = stored?.public ? detectGitProvider(stored.public) : null;
  // A token kept across a change of provider or host would be sent to the wrong host.
  const moved = storedProvider !== null && (storedProvider !== provider || targetMoved("git", stored!.public, object));
  if (moved && !(secretField in object) && stored?.secrets[secretField] !== undefined) {
    return { prepared: null, errors: { [`git_config.${secretField}`]: [requiredAgain(secretField)] } };
  }
  const usable = moved ? null : stored;
  const merged: Record<string, unknown> = { ...object, provider };
  delete merged.access_token;
  delete merged.app_password;
  const value = secretValue(object, secretField, usable);
  if (value !== undefined && value !== null) merged[secretField] = value;
  const parsed = gitSchemas[provider].safeParse(merged);
  if (!parsed.success) return { prepared: null, errors: fieldErrors(parsed.error, ["git_config"]) };
  const publicPart: Record<string, unknown> = { ...parsed.data, provider };
  const secret = publicPart[secretField] as string;
  delete publicPart.access_token;
  delete publicPart.app_password;
  return {
    prepared: {
      public: publicPart,
      secrets: {
        git_access_token_sealed: secretField === "access_token" ? secret : null,
        git_app_password_sealed: secretField === "app_password" ? secret : null,
      },
    },
    errors: {},
  };
}

/** The hosts and URLs of a prepared config that the network guard must accept, keyed by field. */
export function targetsOf(method: DeploymentMethod, config: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const key = `${method}_config`;
  for (const field of ["host", "gitlab_url", "api_url"]) {
    const value = config[field];
    if (typeof value === "string" && value) out[`${key}.${field}`] = value;
  }
  return out;
}

/** Reassembles a full deployer config from its stored public part and opened secrets. */
export function assembleConfig(publicPart: Record<string, unknown>, secrets: Record<string, string | undefined>): Record<string, unknown> {
  const config: Record<string, unknown> = { ...publicPart };
  for (const [field, value] of Object.entries(secrets)) if (value !== undefined) config[field] = value;
  return config;
}
