/**
 * A stand-in for the Bitbucket Cloud REST API 2.0 endpoints the Bitbucket deployer calls,
 * for one repository: repository and branch reads, commits by multipart upload to `/src`
 * (which also creates the branch), pull requests with the `q` filter the deployer uses, and
 * branch creation at a commit. Also Bitbucket's OAuth endpoints (`/site/oauth2/authorize`,
 * `/site/oauth2/access_token` with the client in Basic auth, no PKCE, expiring tokens with
 * refresh) and `GET /2.0/user`; issued tokens are sent as `Authorization: Bearer`.
 */
import { GitRepo, type FileChange } from "./gitModel.ts";
import { createOAuthServer, type OAuthServer } from "./oauthServer.ts";
import { jsonBody, startHttpPeer, type HttpPeer, type PeerRequest, type PeerResponse } from "./httpPeer.ts";

/** A pull request as the stand-in keeps it. */
export interface StandInBitbucketPull {
  id: number;
  title: string;
  description: string;
  source: string;
  destination: string;
  state: "OPEN" | "MERGED" | "DECLINED";
}

/** A running Bitbucket stand-in. */
export interface BitbucketStandIn extends HttpPeer {
  workspace: string;
  slug: string;
  username: string;
  appPassword: string;
  repo: GitRepo;
  pulls: StandInBitbucketPull[];
  /** The OAuth authorization server; its tokens are accepted as Bearer tokens. */
  oauth: OAuthServer;
}

const META_FIELDS = new Set(["message", "branch", "parents", "author", "files"]);
const error = (status: number, message: string): PeerResponse => ({ status, body: { type: "error", error: { message } } });

/** Starts the stand-in with `main` holding `files`. */
export async function startBitbucketStandIn(options: { files?: Record<string, string> } = {}): Promise<BitbucketStandIn> {
  const workspace = "acme";
  const slug = "site";
  const username = "deploy-bot";
  const appPassword = "ATBBStandInAppPassword01";
  const repo = GitRepo.withFiles("main", options.files ?? { "README.md": "# site\n" });
  const pulls: StandInBitbucketPull[] = [];
  const oauth = createOAuthServer({ prefix: "bbat", authorizePath: "/site/oauth2/authorize", tokenPath: "/site/oauth2/access_token", clientAuth: "basic", refresh: { expiresIn: 7200 } });
  const prefix = `/2.0/repositories/${workspace}/${slug}`;
  const at = (path: string) => new RegExp(`^${prefix}${path}$`);
  const branchJson = (name: string) => {
    const commit = repo.commits.get(repo.branches.get(name)!)!;
    return { name, type: "branch", target: { hash: commit.sha, message: commit.message, parents: commit.parents.map((hash) => ({ hash })) } };
  };
  const pullJson = (pull: StandInBitbucketPull) => ({
    id: pull.id,
    title: pull.title,
    description: pull.description,
    state: pull.state,
    source: { branch: { name: pull.source } },
    destination: { branch: { name: pull.destination } },
    links: { html: { href: `https://bitbucket.example/${workspace}/${slug}/pull-requests/${pull.id}` } },
  });

  const peer = await startHttpPeer(
    [
      ...oauth.routes,
      { method: "GET", pattern: /^\/2\.0\/user$/, handler: () => ({ status: 200, body: { uuid: "{5f1c6b7e-0000-4000-8000-000000000042}", username: "bucket-dev", display_name: "Bucket Developer" } }) },
      { method: "GET", pattern: at(""), handler: () => ({ status: 200, body: { full_name: `${workspace}/${slug}`, mainbranch: { name: "main" } } }) },
      {
        method: "POST",
        pattern: at("/refs/branches"),
        handler: (request) => {
          const body = jsonBody<{ name: string; target: { hash: string } }>(request);
          if (repo.branches.has(body.name)) return error(400, `Branch "${body.name}" already exists.`);
          if (!repo.commits.has(body.target.hash)) return error(400, "Unknown target commit.");
          repo.branches.set(body.name, body.target.hash);
          return { status: 201, body: branchJson(body.name) };
        },
      },
      { method: "GET", pattern: at("/refs/branches/(?<branch>.+)"), handler: ({ params }) => (repo.branches.has(params.branch!) ? { status: 200, body: branchJson(params.branch!) } : error(404, `Branch "${params.branch}" not found`)) },
      { method: "POST", pattern: at("/src"), handler: (request) => commitUpload(repo, request, prefix) },
      {
        method: "GET",
        pattern: at("/pullrequests"),
        handler: ({ url }) => {
          const q = url.searchParams.get("q") ?? "";
          const field = (name: string) => new RegExp(`${name.replace(/\./g, "\\.")}\\s*=\\s*"([^"]*)"`).exec(q)?.[1];
          const found = pulls.filter(
            (p) => (!field("source.branch.name") || p.source === field("source.branch.name")) && (!field("destination.branch.name") || p.destination === field("destination.branch.name")) && (!field("state") || p.state === field("state")),
          );
          return { status: 200, body: { pagelen: 10, size: found.length, page: 1, values: found.map(pullJson) } };
        },
      },
      {
        method: "POST",
        pattern: at("/pullrequests"),
        handler: (request) => {
          const body = jsonBody<{ title: string; description?: string; source: { branch: { name: string } }; destination: { branch: { name: string } } }>(request);
          const source = body.source.branch.name;
          const destination = body.destination.branch.name;
          if (!repo.branches.has(source) || !repo.branches.has(destination)) return error(400, "source or destination branch not found");
          if (pulls.some((p) => p.source === source && p.destination === destination && p.state === "OPEN")) return error(400, "There is already an open pull request for this source branch.");
          const pull: StandInBitbucketPull = { id: pulls.length + 1, title: body.title, description: body.description ?? "", source, destination, state: "OPEN" };
          pulls.push(pull);
          return { status: 201, body: pullJson(pull) };
        },
      },
    ],
    (request: PeerRequest) => {
      if (oauth.owns(request.url.pathname)) return null;
      const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
      if (bearer !== undefined && oauth.accessTokens.has(bearer)) return null;
      return request.headers.authorization === `Basic ${Buffer.from(`${username}:${appPassword}`).toString("base64")}` ? null : error(401, "Unauthorized");
    },
  );
  return Object.assign(peer, { workspace, slug, username, appPassword, repo, pulls, oauth });
}

/** POST /src: a multipart commit; file fields are named by path (a leading `/` allowed). */
async function commitUpload(repo: GitRepo, request: PeerRequest, prefix: string): Promise<PeerResponse> {
  const form = await new Request("http://stand-in/src", { method: "POST", headers: { "content-type": String(request.headers["content-type"]) }, body: request.body }).formData();
  const text = (name: string) => {
    const value = form.get(name);
    return typeof value === "string" ? value : undefined;
  };
  const branch = text("branch") ?? "main";
  const parents = text("parents")?.split(",") ?? [];
  const head = repo.branches.get(branch);
  if (!head && parents.length === 0) return error(400, "A new branch needs parents.");
  if (head && parents.length > 0 && !parents.includes(head)) return error(409, "The branch has moved on: parents do not include its head.");
  const parent = parents[0] ?? head!;
  if (!repo.commits.has(parent)) return error(400, "Unknown parent commit.");
  const changes: FileChange[] = [];
  for (const [name, value] of form) {
    if (META_FIELDS.has(name)) continue;
    const content = typeof value === "string" ? Buffer.from(value) : Buffer.from(await value.arrayBuffer());
    changes.push({ path: name.replace(/^\/+/, ""), content });
  }
  const sha = repo.commitChanges(parent, changes, text("message") ?? "Edited online");
  repo.branches.set(branch, sha);
  return { status: 201, headers: { location: `https://api.bitbucket.example${prefix}/commit/${sha}` } };
}
