/**
 * Who a token belongs to at its host (the SDKs the deployers use, through the network
 * guard): GitHub `GET /user`, GitLab `GET /api/v4/user`, Bitbucket `GET /user`.
 */
import { Gitlab } from "@gitbeaker/rest";
import { Octokit } from "@octokit/rest";
import { AppError } from "../errors.ts";
import { GuardedDispatcher } from "../net/guardedDispatcher.ts";
import { createGuardedFetch } from "../net/guardedFetch.ts";
import type { NetworkPolicy } from "../net/networkGuard.ts";
import { providerNames, type GitHost } from "./providers.ts";

/** An account at a git host. */
export interface GitAccount {
  id: string;
  login: string;
  name: string | null;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The account `token` signs in as. @throws AppError 502 when the host does not answer as expected */
export async function accountOf(provider: GitHost, apiBase: string, token: string, network: NetworkPolicy): Promise<GitAccount> {
  try {
    if (provider === "github") {
      const guarded = createGuardedFetch(network, { origin: apiBase });
      try {
        const octokit = new Octokit({ auth: token, baseUrl: apiBase, userAgent: "schemaforge", log: silent, request: { fetch: guarded.fetch } });
        const { data } = await octokit.rest.users.getAuthenticated();
        return { id: String(data.id), login: data.login, name: data.name ?? null };
      } finally {
        await guarded.close();
      }
    }
    if (provider === "gitlab") {
      const dispatcher = new GuardedDispatcher(network, { origin: apiBase });
      try {
        const api = new Gitlab({ host: apiBase, oauthToken: token, agent: dispatcher as never, queryTimeout: 30_000 });
        const user = await api.Users.showCurrentUser();
        return { id: String(user.id), login: String(user.username), name: typeof user.name === "string" ? user.name : null };
      } finally {
        await dispatcher.close();
      }
    }
    const guarded = createGuardedFetch(network, { origin: apiBase });
    try {
      const response = await guarded.fetch(`${apiBase}/user`, { headers: { authorization: `Bearer ${token}`, accept: "application/json" } });
      if (!response.ok) throw new Error(`status ${response.status}`);
      const user = (await response.json()) as { uuid?: string; account_id?: string; username?: string; nickname?: string; display_name?: string };
      const id = user.uuid ?? user.account_id;
      const login = user.username ?? user.nickname;
      if (!id || !login) throw new Error("no account id");
      return { id, login, name: user.display_name ?? null };
    } finally {
      await guarded.close();
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError(502, "provider_unavailable", `${providerNames[provider]} did not say whose account the new token is for; try again later.`);
  }
}
