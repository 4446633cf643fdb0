/**
 * Whether a git connection can still be used as it is. A connection belongs to the instance
 * it was made with (`instance_url`: github.com, a GitLab URL, bitbucket.org): its tokens were
 * issued there, and its refresh token can only be redeemed there with the OAuth app this
 * server had there. When the operator points the provider at another instance (`GITLAB_URL`,
 * `GITHUB_OAUTH_BASE`, `BITBUCKET_OAUTH_BASE`) or another API host (`GITHUB_API_BASE`,
 * `BITBUCKET_API_BASE`; `api_base`, recorded since 0150), the connection is not used at all: its tokens
 * are never sent to the new instance (nor, with the new instance's client, refreshed at the
 * old one), and it reads as needing reconnection until its owner connects again.
 */
import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";
import { providerNames, providerSettings } from "./providers.ts";
import type { ConnectionRow } from "./store.ts";

/** Why a connection cannot be used, as the error its use raises. */
export interface ConnectionProblem {
  status: 401 | 422;
  code: "git_reauthorization_required" | "git_provider_disabled";
  message: string;
}

/** An instance URL as compared: origin (lower-cased by URL) and path without trailing slashes. */
function instanceKey(url: string): string {
  if (!URL.canParse(url)) return url.trim().toLowerCase();
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}

/** Whether two instance URLs name the same instance. */
export function sameInstance(a: string, b: string): boolean {
  return instanceKey(a) === instanceKey(b);
}

/** What stands in the way of using `row` now, or null when nothing does. */
export function connectionProblem(config: Pick<Config, "git">, row: Pick<ConnectionRow, "provider" | "instance_url" | "api_base" | "account_login" | "expires_at" | "has_refresh_token">): ConnectionProblem | null {
  const name = providerNames[row.provider];
  const settings = providerSettings(config, row.provider);
  if (!settings) return { status: 422, code: "git_provider_disabled", message: `${name} sign-in is no longer configured on this server.` };
  if (!sameInstance(settings.instanceUrl, row.instance_url)) {
    return {
      status: 401,
      code: "git_reauthorization_required",
      message: `The ${name} connection of ${row.account_login} was made with ${row.instance_url}, but this server now signs in to ${name} at ${settings.instanceUrl}; its tokens are not sent to another instance. Connect the account again.`,
    };
  }
  if (row.api_base !== null && !sameInstance(settings.apiBase, row.api_base)) {
    return {
      status: 401,
      code: "git_reauthorization_required",
      message: `The ${name} connection of ${row.account_login} was made with the API at ${row.api_base}, but this server now calls ${name} at ${settings.apiBase}; its tokens are not sent to another host. Connect the account again.`,
    };
  }
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now() && !row.has_refresh_token) {
    return { status: 401, code: "git_reauthorization_required", message: `The ${name} token of ${row.account_login} has expired; connect the account again.` };
  }
  return null;
}

/** Throws the problem of `row`, if any. @throws AppError 401 `git_reauthorization_required`, 422 `git_provider_disabled` */
export function assertUsable(config: Pick<Config, "git">, row: ConnectionRow): void {
  const problem = connectionProblem(config, row);
  if (problem) throw new AppError(problem.status, problem.code, problem.message);
}
