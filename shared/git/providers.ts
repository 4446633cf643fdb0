/**
 * The git hosts users sign in to (OAuth 2.0 authorization code grant): where each one's
 * authorization server and API live, what it supports, and whether this server has a client
 * (an OAuth app) there. GitLab may be self-hosted (`GITLAB_URL`); every request to any host
 * goes through the network guard.
 *
 * Glossary: the *instance* is the host an account lives on (github.com, gitlab.com or a
 * self-hosted GitLab, bitbucket.org); a *connection* is a user's signed-in account there.
 */
import type { Config } from "../config.ts";

export const gitProviders = ["github", "gitlab", "bitbucket"] as const;
export type GitHost = (typeof gitProviders)[number];

/** Display names, for messages. */
export const providerNames: Record<GitHost, string> = { github: "GitHub", gitlab: "GitLab", bitbucket: "Bitbucket" };

/** One host's OAuth client and endpoints. */
export interface ProviderSettings {
  provider: GitHost;
  clientId: string;
  clientSecret: string;
  /** The instance: the OAuth base (github.com, the GitLab URL, bitbucket.org). */
  instanceUrl: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Base of the REST API (GitHub and Bitbucket: their API host; GitLab: the instance, gitbeaker adds /api/v4). */
  apiBase: string;
  /** Scopes asked for (Bitbucket takes its scopes from the consumer's settings). */
  scope: string | undefined;
  /** Whether the host supports PKCE (RFC 7636, S256); Bitbucket Cloud documents none. */
  pkce: boolean;
  /** How the client authenticates at the token endpoint. */
  clientAuth: "post" | "basic";
  /** Whether the host issues refresh tokens (GitLab and Bitbucket; GitHub OAuth apps do not, by default). */
  refreshes: boolean;
}

/** The settings of `provider`, or null when this server has no OAuth client there. */
export function providerSettings(config: Pick<Config, "git">, provider: GitHost): ProviderSettings | null {
  const git = config.git;
  switch (provider) {
    case "github":
      if (!git.github.clientId || !git.github.clientSecret) return null;
      return {
        provider,
        clientId: git.github.clientId,
        clientSecret: git.github.clientSecret,
        instanceUrl: git.github.oauthBase,
        authorizationEndpoint: `${git.github.oauthBase}/login/oauth/authorize`,
        tokenEndpoint: `${git.github.oauthBase}/login/oauth/access_token`,
        apiBase: git.github.apiBase,
        scope: "repo read:user",
        pkce: true,
        clientAuth: "post",
        refreshes: false,
      };
    case "gitlab":
      if (!git.gitlab.clientId || !git.gitlab.clientSecret) return null;
      return {
        provider,
        clientId: git.gitlab.clientId,
        clientSecret: git.gitlab.clientSecret,
        instanceUrl: git.gitlab.url,
        authorizationEndpoint: `${git.gitlab.url}/oauth/authorize`,
        tokenEndpoint: `${git.gitlab.url}/oauth/token`,
        apiBase: git.gitlab.url,
        scope: "api read_user",
        pkce: true,
        clientAuth: "post",
        refreshes: true,
      };
    case "bitbucket":
      if (!git.bitbucket.clientId || !git.bitbucket.clientSecret) return null;
      return {
        provider,
        clientId: git.bitbucket.clientId,
        clientSecret: git.bitbucket.clientSecret,
        instanceUrl: git.bitbucket.oauthBase,
        authorizationEndpoint: `${git.bitbucket.oauthBase}/site/oauth2/authorize`,
        tokenEndpoint: `${git.bitbucket.oauthBase}/site/oauth2/access_token`,
        apiBase: git.bitbucket.apiBase,
        scope: undefined,
        pkce: false,
        clientAuth: "basic",
        refreshes: true,
      };
  }
}

/** The redirect URI registered with the provider's OAuth app. */
export const redirectUriOf = (config: Pick<Config, "git">, provider: GitHost) => config.git.redirectUrl.replace("{provider}", provider);
