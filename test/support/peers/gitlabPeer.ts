/**
 * A stand-in for the GitLab REST API (v4) endpoints the GitLab deployer calls, for one
 * project, driven through the real @gitbeaker/rest pointed at it with `host`: project and
 * branch reads, the recursive tree listing (paginated with Link headers, as gitbeaker
 * follows them), commits with actions (GitLab's create/update rules), merge requests, branch
 * creation at a commit; the project answers to its id and its path (`acme/site`). Also
 * GitLab's OAuth endpoints (`/oauth/authorize`, `/oauth/token`, expiring tokens with rotating
 * refresh tokens) and `GET /api/v4/user`; issued tokens are sent as `Authorization: Bearer`.
 */
import { GitRepo, type FileChange } from "./gitModel.ts";
import { createOAuthServer, type OAuthServer } from "./oauthServer.ts";
import { jsonBody, startHttpPeer, type HttpPeer, type PeerRequest, type PeerResponse } from "./httpPeer.ts";

/** A merge request as the stand-in keeps it. */
export interface StandInMergeRequest {
  iid: number;
  title: string;
  description: string;
  source_branch: string;
  target_branch: string;
  state: "opened" | "closed" | "merged";
}

/** A running GitLab stand-in. */
export interface GitlabStandIn extends HttpPeer {
  projectId: number;
  token: string;
  repo: GitRepo;
  mergeRequests: StandInMergeRequest[];
  /** The OAuth authorization server; its tokens are accepted like `token`. */
  oauth: OAuthServer;
}

type Action = { action: string; file_path: string; content?: string; encoding?: string };

/** Starts the stand-in with `main` holding `files`. */
export async function startGitlabStandIn(options: { files?: Record<string, string>; token?: string } = {}): Promise<GitlabStandIn> {
  const projectId = 42;
  const token = options.token ?? "glpat-StandInToken012345";
  const repo = GitRepo.withFiles("main", options.files ?? { "README.md": "# site\n" });
  const mergeRequests: StandInMergeRequest[] = [];
  const oauth = createOAuthServer({ prefix: "glpat", authorizePath: "/oauth/authorize", tokenPath: "/oauth/token", clientAuth: "post", refresh: { expiresIn: 7200 } });
  const at = (path: string) => new RegExp(`^/api/v4/projects/(?:${projectId}|acme/site)${path}$`);
  const branchJson = (name: string) => {
    const commit = repo.commits.get(repo.branches.get(name)!)!;
    return { name, commit: { id: commit.sha, short_id: commit.sha.slice(0, 8), message: commit.message, parent_ids: commit.parents }, merged: false, protected: name === "main" };
  };
  const mrJson = (mr: StandInMergeRequest) => ({ ...mr, id: 1000 + mr.iid, project_id: projectId, web_url: `https://gitlab.example/acme/site/-/merge_requests/${mr.iid}` });
  const message = (status: number, text: unknown): PeerResponse => ({ status, body: { message: text } });

  const peer = await startHttpPeer(
    [
      ...oauth.routes,
      { method: "GET", pattern: /^\/api\/v4\/user$/, handler: () => ({ status: 200, body: { id: 7001, username: "lab-dev", name: "Lab Developer" } }) },
      { method: "GET", pattern: at(""), handler: () => ({ status: 200, body: { id: projectId, path_with_namespace: "acme/site", default_branch: "main" } }) },
      {
        method: "POST",
        pattern: at("/repository/branches"),
        handler: (request) => {
          // Gitbeaker sends the fields as JSON; curl users send them as query parameters.
          const body = jsonBody<{ branch?: string; ref?: string }>(request);
          const branch = body.branch ?? request.url.searchParams.get("branch") ?? "";
          const ref = body.ref ?? request.url.searchParams.get("ref") ?? "";
          if (repo.branches.has(branch)) return message(400, "Branch already exists");
          const sha = repo.branches.get(ref) ?? (repo.commits.has(ref) ? ref : undefined);
          if (!sha) return message(400, "Invalid reference name");
          repo.branches.set(branch, sha);
          return { status: 201, body: branchJson(branch) };
        },
      },
      { method: "GET", pattern: at("/repository/branches/(?<branch>.+)"), handler: ({ params }) => (repo.branches.has(params.branch!) ? { status: 200, body: branchJson(params.branch!) } : message(404, "404 Branch Not Found")) },
      { method: "GET", pattern: at("/repository/tree"), handler: (request) => listTree(repo, request) },
      { method: "POST", pattern: at("/repository/commits"), handler: (request) => createCommit(repo, request) },
      {
        method: "GET",
        pattern: at("/merge_requests"),
        handler: ({ url }) => {
          const q = url.searchParams;
          const found = mergeRequests.filter(
            (mr) =>
              (!q.get("source_branch") || mr.source_branch === q.get("source_branch")) &&
              (!q.get("target_branch") || mr.target_branch === q.get("target_branch")) &&
              (!q.get("state") || q.get("state") === "all" || mr.state === q.get("state")),
          );
          return { status: 200, body: found.map(mrJson) };
        },
      },
      {
        method: "POST",
        pattern: at("/merge_requests"),
        handler: (request) => {
          const body = jsonBody<{ source_branch: string; target_branch: string; title: string; description?: string }>(request);
          if (!repo.branches.has(body.source_branch)) return message(400, { source_branch: ["is invalid"] });
          const open = mergeRequests.find((mr) => mr.source_branch === body.source_branch && mr.target_branch === body.target_branch && mr.state === "opened");
          if (open) return message(409, [`Another open merge request already exists for this source branch: !${open.iid}`]);
          const mr: StandInMergeRequest = { iid: mergeRequests.length + 1, title: body.title, description: body.description ?? "", source_branch: body.source_branch, target_branch: body.target_branch, state: "opened" };
          mergeRequests.push(mr);
          return { status: 201, body: mrJson(mr) };
        },
      },
    ],
    (request: PeerRequest) => {
      if (oauth.owns(request.url.pathname)) return null;
      const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
      return request.headers["private-token"] === token || (bearer !== undefined && oauth.accessTokens.has(bearer)) ? null : message(401, "401 Unauthorized");
    },
  );
  return Object.assign(peer, { projectId, token, repo, mergeRequests, oauth });
}

/** GET /repository/tree?ref&recursive&per_page&page: blobs and trees, Link header for more. */
function listTree(repo: GitRepo, { url }: PeerRequest): PeerResponse {
  const ref = url.searchParams.get("ref") ?? "main";
  const head = repo.branches.get(ref);
  if (!head) return { status: 404, body: { message: "404 Tree Not Found" } };
  const paths = [...repo.blobShasOf(repo.commits.get(head)!.tree)].sort(([a], [b]) => a.localeCompare(b));
  const dirs = new Set(paths.flatMap(([path]) => path.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
  const items = [
    ...[...dirs].map((path) => ({ id: "0".repeat(40), name: path.split("/").at(-1), type: "tree", path, mode: "040000" })),
    ...paths.map(([path, sha]) => ({ id: sha, name: path.split("/").at(-1), type: "blob", path, mode: "100644" })),
  ];
  const perPage = Number(url.searchParams.get("per_page") ?? 20);
  const page = Number(url.searchParams.get("page") ?? 1);
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const headers: Record<string, string> = {};
  if (page * perPage < items.length) {
    const next = new URL(url);
    next.searchParams.set("page", String(page + 1));
    next.searchParams.set("per_page", String(perPage));
    headers.link = `<${next.toString()}>; rel="next"`;
  }
  return { status: 200, body: slice, headers };
}

/** POST /repository/commits: GitLab's rules for branch, start_branch and actions. */
function createCommit(repo: GitRepo, request: PeerRequest): PeerResponse {
  const body = jsonBody<{ branch: string; commit_message: string; actions: Action[]; start_branch?: string }>(request);
  const exists = repo.branches.has(body.branch);
  if (exists && body.start_branch) return { status: 400, body: { message: `A branch called '${body.branch}' already exists.` } };
  const parentRef = exists ? body.branch : body.start_branch;
  const parent = parentRef ? repo.branches.get(parentRef) : undefined;
  if (!parent) return { status: 400, body: { message: "You can only create or edit files when you are on a branch" } };
  const current = repo.blobShasOf(repo.commits.get(parent)!.tree);
  const changes: FileChange[] = [];
  for (const action of body.actions) {
    if (action.action === "create" && current.has(action.file_path)) return { status: 400, body: { message: "A file with this name already exists" } };
    if (action.action === "update" && !current.has(action.file_path)) return { status: 400, body: { message: "A file with this name doesn't exist" } };
    if (action.action !== "create" && action.action !== "update") return { status: 400, body: { message: `unsupported action ${action.action}` } };
    changes.push({ path: action.file_path, content: Buffer.from(action.content ?? "", action.encoding === "base64" ? "base64" : "utf8") });
  }
  const sha = repo.commitChanges(parent, changes, body.commit_message);
  repo.branches.set(body.branch, sha);
  const commit = repo.commits.get(sha)!;
  return { status: 201, body: { id: sha, short_id: sha.slice(0, 8), title: commit.message.split("\n")[0], message: commit.message, parent_ids: commit.parents } };
}
