/**
 * Deployment target configurations, field names as the spec's FTP, SSH and git provider
 * config tables give them, plus a few optional fields the spec leaves open (marked below).
 * The API validates environment bodies with these schemas; deployers parse their config
 * with them again, since a stored config may predate a rule.
 */
import { z } from "zod";
import { idNumber, wholeNumber } from "../canonicalNumbers.ts";
import { DeployError } from "./errors.ts";
import { hasControlCharacter } from "./files.ts";

const host = z.string().trim().min(1).max(255);
const port = (fallback: number) => wholeNumber({ min: 1, max: 65535, default: fallback });
const remotePath = z
  .string()
  .trim()
  .min(1)
  .max(1024)
  .refine((value) => !hasControlCharacter(value), { error: "must not contain control characters" });
const secret = z.string().max(16_384);
const name = z.string().trim().min(1).max(255);
/** A git branch name as git accepts it (check-ref-format rules). */
export const branchName = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((value) => !/[\0-\x20~^:?*[\\\x7f]|\.\.|@\{|^\/|\/$|\.lock$|^-/.test(value), { error: "is not a valid branch name" });

/** FTP config (spec: host, port, username, password, remote_path, passive_mode). */
export const ftpConfigSchema = z.object({
  host,
  port: port(21),
  username: name,
  password: secret,
  remote_path: remotePath,
  /** Only passive mode is implemented; `false` is accepted and logged as a warning. */
  passive_mode: z.boolean().optional(),
  /** Not in the spec: FTPS, explicit (`true`, AUTH TLS) or `"implicit"`. */
  secure: z.union([z.boolean(), z.literal("implicit")]).optional(),
  /** Not in the spec: parallel connections of the upload pool (default 4). */
  connections: wholeNumber({ min: 1, max: 10 }).optional(),
});
export type FtpConfig = z.input<typeof ftpConfigSchema>;

/** SSH config (spec: host, port, username, auth_method, password, private_key, remote_path). */
export const sshConfigSchema = z
  .object({
    host,
    port: port(22),
    username: name,
    auth_method: z.enum(["password", "key"]),
    password: secret.optional().nullable(),
    private_key: secret.optional().nullable(),
    remote_path: remotePath,
    /** Not in the spec: the host key pinned on the first successful connection (`SHA256:…`). */
    host_key_fingerprint: z.string().max(200).optional().nullable(),
    /** Not in the spec: release folders kept, the current one included (default 5). */
    keep_releases: wholeNumber({ min: 1, max: 100 }).optional(),
  })
  .superRefine((config, ctx) => {
    if (config.auth_method === "password" && !config.password) ctx.addIssue({ code: "custom", path: ["password"], message: "is required when auth_method is password" });
    if (config.auth_method === "key" && !config.private_key) ctx.addIssue({ code: "custom", path: ["private_key"], message: "is required when auth_method is key" });
  });
export type SshConfig = z.input<typeof sshConfigSchema>;

/**
 * An API base URL, without user info: these URLs are stored in the clear and shown to every
 * member who reads the environment, and a password in them would be sent nowhere anyway
 * (fetch refuses URLs with credentials); the token fields are where secrets go.
 */
const httpUrl = z
  .url({ protocol: /^https?$/, error: "expected an http(s) URL" })
  .refine((value) => !URL.canParse(value) || (new URL(value).username === "" && new URL(value).password === ""), {
    error: "must not hold a user name or password; the access token (or app password) field takes the credentials",
  });

/** Repository host with owner and repository (GitHub). */
export const githubConfigSchema = z.object({
  provider: z.literal("github").optional(),
  owner: name,
  repo: name,
  branch: branchName,
  access_token: secret.min(1),
  /** Not in the spec: API base URL for GitHub Enterprise (`https://ghe.example.com/api/v3`). */
  api_url: httpUrl.optional(),
});
export type GithubConfig = z.input<typeof githubConfigSchema>;

/**
 * Not in the spec: how the host takes `access_token`. `oauth` when it is the token of a git
 * connection (a user's sign-in, shared/git), which GitLab and Bitbucket take as a Bearer
 * token; set by the service when it resolves an environment's `connection_id`, never taken
 * from a request.
 */
const tokenType = z.enum(["personal", "oauth"]).optional();

/** Project-id based host (GitLab). */
export const gitlabConfigSchema = z.object({
  provider: z.literal("gitlab").optional(),
  project_id: idNumber(),
  branch: branchName,
  access_token: secret.min(1),
  /** Self-hosted instance address; gitlab.com when absent. */
  gitlab_url: httpUrl.optional().nullable(),
  token_type: tokenType,
});
export type GitlabConfig = z.input<typeof gitlabConfigSchema>;

/** Workspace based host (Bitbucket Cloud). */
export const bitbucketConfigSchema = z
  .object({
    provider: z.literal("bitbucket").optional(),
    workspace: name,
    repo: name,
    branch: branchName,
    username: name.optional(),
    app_password: secret.min(1).optional(),
    /** Not in the spec: API base URL (`https://api.bitbucket.org/2.0` when absent). */
    api_url: httpUrl.optional(),
    /** With `token_type: "oauth"`: a git connection's token, in place of `username` and `app_password`. */
    access_token: secret.min(1).optional(),
    token_type: tokenType,
  })
  .superRefine((config, ctx) => {
    if (config.token_type === "oauth") {
      if (!config.access_token) ctx.addIssue({ code: "custom", path: ["access_token"], message: "is required with an OAuth token" });
      return;
    }
    if (!config.username) ctx.addIssue({ code: "custom", path: ["username"], message: "Invalid input: expected string, received undefined" });
    if (!config.app_password) ctx.addIssue({ code: "custom", path: ["app_password"], message: "Invalid input: expected string, received undefined" });
  });
export type BitbucketConfig = z.input<typeof bitbucketConfigSchema>;

/**
 * Git configs that use a git connection (a user's sign-in) instead of a token: the
 * repository fields alone; the connection gives the token and the host.
 */
export const gitConnectionConfigSchemas = {
  github: z.object({ provider: z.literal("github").optional(), owner: name, repo: name, branch: branchName }),
  gitlab: z.object({ provider: z.literal("gitlab").optional(), project_id: idNumber(), branch: branchName }),
  bitbucket: z.object({ provider: z.literal("bitbucket").optional(), workspace: name, repo: name, branch: branchName }),
} as const;

/** Any git provider config. */
export type GitConfig = GithubConfig | GitlabConfig | BitbucketConfig;

/** Which git provider a config is for. */
export type GitProvider = "github" | "gitlab" | "bitbucket";

/**
 * Tells the provider from an explicit `provider` field or, as the spec's table implies,
 * from the fields present: `project_id` → GitLab, `workspace` → Bitbucket, `owner` → GitHub.
 */
export function detectGitProvider(config: Record<string, unknown>): GitProvider | null {
  const explicit = config.provider;
  if (explicit === "github" || explicit === "gitlab" || explicit === "bitbucket") return explicit;
  if ("project_id" in config) return "gitlab";
  if ("workspace" in config) return "bitbucket";
  if ("owner" in config) return "github";
  return null;
}

/**
 * Parses a stored or submitted config with its schema.
 * @throws DeployError `invalid_config` listing the fields at fault (never their values).
 */
export function parseConfig<S extends z.ZodType>(schema: S, config: unknown): z.output<S> {
  const parsed = schema.safeParse(config);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "config"} ${issue.message}`);
  throw new DeployError("invalid_config", `Invalid deployment configuration: ${problems.join("; ")}.`);
}
