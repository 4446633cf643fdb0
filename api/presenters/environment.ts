/**
 * The environment resource (spec "Deployment-related resources"): its configs without
 * their secrets, which appear only as `has_password`, `has_private_key`,
 * `has_access_token` or `has_app_password`.
 */
import { z } from "zod";
import { environmentTypes, type EnvironmentRow } from "../../shared/deployments/environments.ts";

const ftpConfig = z.object({ host: z.string(), port: z.number(), username: z.string(), remote_path: z.string(), has_password: z.boolean() }).loose();
const sshConfig = z
  .object({
    host: z.string(),
    port: z.number(),
    username: z.string(),
    auth_method: z.enum(["password", "key"]),
    remote_path: z.string(),
    has_password: z.boolean(),
    has_private_key: z.boolean(),
    host_key_fingerprint: z.string().nullable(),
    host_key_pinned_at: z.string().nullable(),
  })
  .loose();
const gitConfig = z.object({ provider: z.enum(["github", "gitlab", "bitbucket"]), branch: z.string() }).loose();

export const environmentResource = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  type: z.enum(environmentTypes),
  is_default: z.boolean(),
  ftp_config: ftpConfig.nullable(),
  ssh_config: sshConfig.nullable(),
  git_config: gitConfig.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EnvironmentResource = z.infer<typeof environmentResource>;

/** An environment, secrets replaced by flags. */
export function presentEnvironment(row: EnvironmentRow): EnvironmentResource {
  const git = row.git_config;
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    type: row.type,
    is_default: row.is_default,
    ftp_config: row.ftp_config ? ({ ...row.ftp_config, has_password: row.has_ftp_password } as z.infer<typeof ftpConfig>) : null,
    ssh_config: row.ssh_config
      ? ({
          ...row.ssh_config,
          has_password: row.has_ssh_password,
          has_private_key: row.has_ssh_private_key,
          host_key_fingerprint: row.ssh_host_key_fingerprint,
          host_key_pinned_at: row.ssh_host_key_pinned_at?.toISOString() ?? null,
        } as z.infer<typeof sshConfig>)
      : null,
    git_config: git
      ? ({
          ...git,
          ...(git.provider === "bitbucket" ? { has_app_password: row.has_git_app_password } : { has_access_token: row.has_git_access_token }),
        } as unknown as z.infer<typeof gitConfig>)
      : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
