/**
 * The OAuth 2.0 authorization-server side of a git host stand-in (authorization code grant
 * with refresh), mounted on the host's own stand-in: the authorize endpoint redirects at
 * once (the user "consents") with a code; the token endpoint checks the client (form or Basic,
 * as the host does), the code (single use, bound to its redirect URI), PKCE S256 when a
 * challenge was sent, and issues tokens the host's API then accepts. Refresh tokens rotate.
 * `errorsWith200` imitates GitHub, which answers a refused code with 200 and `{error}`.
 */
import { createHash, randomBytes } from "node:crypto";
import type { PeerRequest, PeerResponse, Route } from "./httpPeer.ts";

/** How one host's authorization server behaves. */
export interface OAuthServerOptions {
  /** Token prefix, as the host's tokens look (`gho`, `glpat`-like, …). */
  prefix: string;
  authorizePath: string;
  tokenPath: string;
  clientAuth: "post" | "basic";
  errorsWith200?: boolean;
  /** Issue refresh tokens and this lifetime (seconds) for access tokens. */
  refresh?: { expiresIn: number };
}

/** A pending code. */
interface CodeGrant {
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  used: boolean;
}

/** The running authorization server: its routes, what it issued, and what it was asked. */
export interface OAuthServer {
  clientId: string;
  clientSecret: string;
  routes: Route[];
  /** Whether a path belongs to the authorization server (no API token needed). */
  owns(path: string): boolean;
  /** Access tokens issued and still valid. */
  accessTokens: Set<string>;
  /** Every access and refresh token ever issued (for leak checks). */
  issued: string[];
  /** Query of each authorize request. */
  authorizations: URLSearchParams[];
  /** grant_type of each token request and its answer status. */
  tokenRequests: Array<{ grant: string; status: number; error?: string }>;
  /** Makes every access token issued so far expire (the API refuses them). */
  expireAccessTokens(): void;
}

const token = (prefix: string) => `${prefix}_${randomBytes(18).toString("base64url")}`;

/** Creates the authorization server of one stand-in. */
export function createOAuthServer(options: OAuthServerOptions): OAuthServer {
  const clientId = `client-${randomBytes(6).toString("hex")}`;
  const clientSecret = `secret-${randomBytes(18).toString("base64url")}`;
  const codes = new Map<string, CodeGrant>();
  const refreshTokens = new Map<string, boolean>();
  const accessTokens = new Set<string>();
  const issued: string[] = [];
  const authorizations: URLSearchParams[] = [];
  const tokenRequests: OAuthServer["tokenRequests"] = [];

  const fail = (status: number, error: string, description: string): PeerResponse => ({
    status: options.errorsWith200 && status === 400 ? 200 : status,
    body: { error, error_description: description },
  });

  const authorize = ({ url }: PeerRequest): PeerResponse => {
    const q = url.searchParams;
    authorizations.push(q);
    const redirectUri = q.get("redirect_uri");
    if (q.get("client_id") !== clientId || !redirectUri) return { status: 400, body: { error: "invalid_request", error_description: "unknown client or no redirect_uri" } };
    const back = new URL(redirectUri);
    if (q.get("response_type") !== "code") back.searchParams.set("error", "unsupported_response_type");
    else {
      const code = randomBytes(12).toString("hex");
      const method = q.get("code_challenge_method");
      codes.set(code, { clientId, redirectUri, challenge: q.get("code_challenge") && method === "S256" ? q.get("code_challenge") : null, used: false });
      back.searchParams.set("code", code);
    }
    if (q.get("state")) back.searchParams.set("state", q.get("state")!);
    return { status: 302, headers: { location: back.toString() } };
  };

  const issue = (): PeerResponse => {
    const access = token(options.prefix);
    accessTokens.add(access);
    issued.push(access);
    const body: Record<string, unknown> = { access_token: access, token_type: "bearer", scope: "repo" };
    if (options.refresh) {
      const refresh = token(`${options.prefix}r`);
      refreshTokens.set(refresh, false);
      issued.push(refresh);
      Object.assign(body, { refresh_token: refresh, expires_in: options.refresh.expiresIn });
    }
    return { status: 200, body };
  };

  const exchange = (request: PeerRequest): PeerResponse => {
    const form = new URLSearchParams(request.body.toString());
    let [id, secret] = [form.get("client_id"), form.get("client_secret")];
    if (options.clientAuth === "basic") {
      const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? "");
      [id, secret] = basic ? (Buffer.from(basic[1]!, "base64").toString().split(":").map(decodeURIComponent) as [string, string]) : [null, null];
    }
    const grant = form.get("grant_type") ?? "";
    const answer = (response: PeerResponse) => {
      const error = (response.body as { error?: string } | undefined)?.error;
      tokenRequests.push({ grant, status: response.status, ...(error ? { error } : {}) });
      return response;
    };
    if (id !== clientId || secret !== clientSecret) return answer({ status: 401, body: { error: "invalid_client", error_description: "client authentication failed" } });
    if (grant === "authorization_code") {
      const code = codes.get(form.get("code") ?? "");
      if (!code || code.used) {
        if (code) code.used = true;
        return answer(fail(400, options.errorsWith200 ? "bad_verification_code" : "invalid_grant", "The code passed is incorrect or expired."));
      }
      code.used = true;
      if (form.get("redirect_uri") !== code.redirectUri) return answer(fail(400, "invalid_grant", "redirect_uri mismatch"));
      if (code.challenge) {
        const verifier = form.get("code_verifier") ?? "";
        if (createHash("sha256").update(verifier).digest("base64url") !== code.challenge) return answer(fail(400, "invalid_grant", "PKCE verification failed"));
      }
      return answer(issue());
    }
    if (grant === "refresh_token" && options.refresh) {
      const refresh = form.get("refresh_token") ?? "";
      if (refreshTokens.get(refresh) !== false) return answer(fail(400, "invalid_grant", "refresh token invalid or used"));
      refreshTokens.set(refresh, true);
      return answer(issue());
    }
    return answer(fail(400, "unsupported_grant_type", grant));
  };

  return {
    clientId,
    clientSecret,
    routes: [
      { method: "GET", pattern: new RegExp(`^${options.authorizePath}$`), handler: authorize },
      { method: "POST", pattern: new RegExp(`^${options.tokenPath}$`), handler: exchange },
    ],
    owns: (path) => path === options.authorizePath || path === options.tokenPath,
    accessTokens,
    issued,
    authorizations,
    tokenRequests,
    expireAccessTokens: () => accessTokens.clear(),
  };
}
