/**
 * A stand-in for the GitHub REST API endpoints the GitHub deployer calls, for one
 * repository, driven through the real @octokit/rest pointed at it with `baseUrl`: repository
 * metadata, git refs, commits, blobs and trees over an in-memory git store, and pull requests;
 * plus GitHub's OAuth endpoints (`/login/oauth/authorize`, `/login/oauth/access_token`, errors
 * as 200 with `{error}` as GitHub answers them) and `GET /user` for the tokens they issue.
 */
import { GitRepo, type FileChange } from "./gitModel.ts";
import { createOAuthServer, type OAuthServer } from "./oauthServer.ts";
import { jsonBody, startHttpPeer, type HttpPeer, type PeerRequest, type PeerResponse } from "./httpPeer.ts";

/** A pull request as the stand-in keeps it. */
export interface StandInPull {
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: "open" | "closed";
}

/** A running GitHub stand-in. */
export interface GithubStandIn extends HttpPeer {
  owner: string;
  name: string;
  token: string;
  repo: GitRepo;
  pulls: StandInPull[];
  /** The OAuth authorization server; its tokens are accepted like `token`. */
  oauth: OAuthServer;
}

const notFound: PeerResponse = { status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } };

/** Starts the stand-in with `main` holding `files`. */
export async function startGithubStandIn(options: { files?: Record<string, string>; token?: string } = {}): Promise<GithubStandIn> {
  const owner = "acme";
  const name = "site";
  const token = options.token ?? "ghp_StandInToken0123456789";
  const repo = GitRepo.withFiles("main", options.files ?? { "README.md": "# site\n" });
  const pulls: StandInPull[] = [];
  const oauth = createOAuthServer({ prefix: "gho", authorizePath: "/login/oauth/authorize", tokenPath: "/login/oauth/access_token", clientAuth: "post", errorsWith200: true });
  const prefix = `/repos/${owner}/${name}`;
  const at = (path: string) => new RegExp(`^${prefix}${path}$`);
  const commitJson = (sha: string) => {
    const commit = repo.commits.get(sha)!;
    return { sha, tree: { sha: commit.tree }, parents: commit.parents.map((p) => ({ sha: p })), message: commit.message };
  };
  const pullJson = (pull: StandInPull) => ({
    number: pull.number,
    title: pull.title,
    body: pull.body,
    state: pull.state,
    html_url: `https://github.example/${owner}/${name}/pull/${pull.number}`,
    head: { ref: pull.head, sha: repo.branches.get(pull.head) },
    base: { ref: pull.base },
  });
  const refJson = (branch: string) => ({ ref: `refs/heads/${branch}`, object: { sha: repo.branches.get(branch), type: "commit" } });

  const peer = await startHttpPeer(
    [
      ...oauth.routes,
      { method: "GET", pattern: /^\/user$/, handler: () => ({ status: 200, body: { id: 583231, login: "octo-dev", name: "Octo Developer" } }) },
      { method: "GET", pattern: at(""), handler: () => ({ status: 200, body: { full_name: `${owner}/${name}`, default_branch: "main", permissions: { push: true } } }) },
      {
        method: "GET",
        pattern: at("/git/ref/heads/(?<branch>.+)"),
        handler: ({ params }) => (repo.branches.has(params.branch!) ? { status: 200, body: refJson(params.branch!) } : notFound),
      },
      { method: "GET", pattern: at("/git/commits/(?<sha>[0-9a-f]{40})"), handler: ({ params }) => (repo.commits.has(params.sha!) ? { status: 200, body: commitJson(params.sha!) } : notFound) },
      {
        method: "POST",
        pattern: at("/git/blobs"),
        handler: (request) => {
          const { content, encoding } = jsonBody<{ content: string; encoding?: string }>(request);
          return { status: 201, body: { sha: repo.writeBlob(Buffer.from(content, encoding === "base64" ? "base64" : "utf8")) } };
        },
      },
      { method: "POST", pattern: at("/git/trees"), handler: (request) => createTree(repo, request) },
      {
        method: "POST",
        pattern: at("/git/commits"),
        handler: (request) => {
          const { message, tree, parents } = jsonBody<{ message: string; tree: string; parents: string[] }>(request);
          if (!repo.trees.has(tree) || parents.some((p) => !repo.commits.has(p))) return { status: 422, body: { message: "Tree or parent not found" } };
          return { status: 201, body: commitJson(repo.writeCommit({ tree, parents, message })) };
        },
      },
      {
        method: "POST",
        pattern: at("/git/refs"),
        handler: (request) => {
          const { ref, sha } = jsonBody<{ ref: string; sha: string }>(request);
          const branch = ref.replace(/^refs\/heads\//, "");
          if (repo.branches.has(branch)) return { status: 422, body: { message: "Reference already exists" } };
          repo.branches.set(branch, sha);
          return { status: 201, body: refJson(branch) };
        },
      },
      {
        method: "PATCH",
        pattern: at("/git/refs/heads/(?<branch>.+)"),
        handler: (request) => {
          const branch = request.params.branch!;
          if (!repo.branches.has(branch)) return { status: 422, body: { message: "Reference does not exist" } };
          const { sha, force } = jsonBody<{ sha: string; force?: boolean }>(request);
          if (!force && !repo.isAncestor(repo.branches.get(branch)!, sha)) return { status: 422, body: { message: "Update is not a fast forward" } };
          repo.branches.set(branch, sha);
          return { status: 200, body: refJson(branch) };
        },
      },
      {
        method: "GET",
        pattern: at("/pulls"),
        handler: ({ url }) => {
          const head = url.searchParams.get("head")?.replace(`${owner}:`, "");
          const base = url.searchParams.get("base");
          const state = url.searchParams.get("state") ?? "open";
          const found = pulls.filter((p) => (!head || p.head === head) && (!base || p.base === base) && (state === "all" || p.state === state));
          return { status: 200, body: found.map(pullJson) };
        },
      },
      {
        method: "POST",
        pattern: at("/pulls"),
        handler: (request) => {
          const { title, head, base, body } = jsonBody<{ title: string; head: string; base: string; body?: string }>(request);
          if (!repo.branches.has(head) || !repo.branches.has(base)) return { status: 422, body: { message: "Validation Failed", errors: [{ field: "head", code: "invalid" }] } };
          if (pulls.some((p) => p.head === head && p.base === base && p.state === "open")) {
            return { status: 422, body: { message: "Validation Failed", errors: [{ message: `A pull request already exists for ${owner}:${head}.` }] } };
          }
          const pull: StandInPull = { number: pulls.length + 1, title, body: body ?? "", head, base, state: "open" };
          pulls.push(pull);
          return { status: 201, body: pullJson(pull) };
        },
      },
    ],
    (request: PeerRequest) => {
      if (oauth.owns(request.url.pathname)) return null;
      const given = request.headers.authorization?.replace(/^(token|bearer)\s+/i, "");
      return given === token || (given !== undefined && oauth.accessTokens.has(given)) ? null : { status: 401, body: { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" } };
    },
  );
  return Object.assign(peer, { owner, name, token, repo, pulls, oauth });
}

/** POST /git/trees: entries with a blob sha or inline content, over an optional base tree. */
function createTree(repo: GitRepo, request: PeerRequest): PeerResponse {
  const { base_tree: baseTree, tree } = jsonBody<{ base_tree?: string; tree: Array<{ path: string; mode: string; type: string; sha?: string | null; content?: string }> }>(request);
  if (baseTree && !repo.trees.has(baseTree)) return { status: 422, body: { message: "base_tree not found" } };
  const changes: FileChange[] = tree.map((entry) =>
    entry.content !== undefined
      ? { path: entry.path, content: Buffer.from(entry.content) }
      : entry.sha === null || entry.sha === undefined
        ? { path: entry.path, content: null }
        : { path: entry.path, blob: entry.sha },
  );
  if (changes.some((c) => "blob" in c && !repo.blobs.has(c.blob))) return { status: 422, body: { message: "blob not found" } };
  const sha = repo.applyChanges(baseTree ?? null, changes);
  return { status: 201, body: { sha, tree: repo.trees.get(sha) } };
}
