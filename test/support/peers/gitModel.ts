/**
 * An in-memory git object store for the hosting-API stand-ins: blobs, trees and commits
 * hashed exactly as git hashes them (SHA-1 over `<type> <size>\0<content>`), branches as
 * refs. It holds just enough to apply what the GitHub, GitLab and Bitbucket endpoints do
 * (write blobs and trees, commit a set of file changes onto a parent) and to read back the
 * complete file tree of any commit for the tests to compare.
 */
import { createHash } from "node:crypto";

/** One entry of a tree object. */
export interface TreeEntry {
  name: string;
  mode: "100644" | "100755" | "040000";
  sha: string;
}

/** A parsed commit. */
export interface Commit {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
}

/** A file change: new content, or null to delete the path. */
export type FileChange = { path: string; content: Buffer | null } | { path: string; blob: string };

const hashObject = (type: string, content: Buffer) => createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");

/** One repository: objects plus branches. */
export class GitRepo {
  readonly blobs = new Map<string, Buffer>();
  readonly trees = new Map<string, TreeEntry[]>();
  readonly commits = new Map<string, Commit>();
  readonly branches = new Map<string, string>();

  /** A repository whose `branch` holds one commit with `files`. */
  static withFiles(branch: string, files: Record<string, string>): GitRepo {
    const repo = new GitRepo();
    const tree = repo.applyChanges(null, Object.entries(files).map(([path, text]) => ({ path, content: Buffer.from(text) })));
    repo.branches.set(branch, repo.writeCommit({ tree, parents: [], message: "Initial commit\n" }));
    return repo;
  }

  writeBlob(content: Buffer): string {
    const sha = hashObject("blob", content);
    this.blobs.set(sha, content);
    return sha;
  }

  writeTree(entries: TreeEntry[]): string {
    // git orders entries by name, comparing directories as if their name ended in "/".
    const key = (e: TreeEntry) => (e.mode === "040000" ? `${e.name}/` : e.name);
    const sorted = [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    const content = Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode === "040000" ? "40000" : e.mode} ${e.name}\0`), Buffer.from(e.sha, "hex")]));
    const sha = hashObject("tree", content);
    this.trees.set(sha, sorted);
    return sha;
  }

  writeCommit(commit: Omit<Commit, "sha">): string {
    const when = "1700000000 +0000";
    const text = [`tree ${commit.tree}`, ...commit.parents.map((p) => `parent ${p}`), `author Stand-in <stand-in@example.com> ${when}`, `committer Stand-in <stand-in@example.com> ${when}`, "", commit.message].join("\n");
    const sha = hashObject("commit", Buffer.from(text));
    this.commits.set(sha, { sha, ...commit });
    return sha;
  }

  /** Applies file changes to a tree (null: the empty tree) and returns the new tree's sha. */
  applyChanges(baseTree: string | null, changes: FileChange[]): string {
    const files = baseTree ? this.blobShasOf(baseTree) : new Map<string, string>();
    for (const change of changes) {
      if ("blob" in change) files.set(change.path, change.blob);
      else if (change.content === null) files.delete(change.path);
      else files.set(change.path, this.writeBlob(change.content));
    }
    return this.treeFromBlobs(files);
  }

  /** Builds nested trees from a flat map of path → blob sha. */
  treeFromBlobs(files: Map<string, string>): string {
    const entries: TreeEntry[] = [];
    const dirs = new Map<string, Map<string, string>>();
    for (const [path, sha] of files) {
      const slash = path.indexOf("/");
      if (slash < 0) entries.push({ name: path, mode: "100644", sha });
      else {
        const dir = path.slice(0, slash);
        if (!dirs.has(dir)) dirs.set(dir, new Map());
        dirs.get(dir)!.set(path.slice(slash + 1), sha);
      }
    }
    for (const [name, inner] of dirs) entries.push({ name, mode: "040000", sha: this.treeFromBlobs(inner) });
    return this.writeTree(entries);
  }

  /** Flat path → blob sha of a tree. */
  blobShasOf(tree: string, prefix = ""): Map<string, string> {
    const out = new Map<string, string>();
    for (const entry of this.trees.get(tree) ?? []) {
      const path = `${prefix}${entry.name}`;
      if (entry.mode === "040000") for (const [p, s] of this.blobShasOf(entry.sha, `${path}/`)) out.set(p, s);
      else out.set(path, entry.sha);
    }
    return out;
  }

  /** Every file of a commit as text (latin1 keeps bytes), sorted by path. */
  filesOf(commitSha: string): Record<string, string> {
    const commit = this.commits.get(commitSha);
    if (!commit) throw new Error(`no commit ${commitSha}`);
    const files = [...this.blobShasOf(commit.tree)].sort(([a], [b]) => a.localeCompare(b));
    return Object.fromEntries(files.map(([path, sha]) => [path, this.blobs.get(sha)!.toString("latin1")]));
  }

  /** Whether commit `ancestor` is `descendant` or one of its ancestors. */
  isAncestor(ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const queue = [descendant];
    while (queue.length) {
      const sha = queue.shift()!;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(this.commits.get(sha)?.parents ?? []));
    }
    return false;
  }

  /** Commits a set of changes on top of `parent` and returns the new commit's sha. */
  commitChanges(parent: string | null, changes: FileChange[], message: string): string {
    const base = parent ? this.commits.get(parent)!.tree : null;
    return this.writeCommit({ tree: this.applyChanges(base, changes), parents: parent ? [parent] : [], message });
  }
}
