/**
 * The generated files as deployers read them: paths checked and normalised once, so no
 * deployer can be steered outside its target (`../`), inject protocol commands (a newline in
 * an FTP path), write the same path twice, or write what is not portable (a `.git` folder in
 * a web root that is a checkout or in a commit, a Windows device name, two paths that differ
 * only in case: shared/portablePaths.ts).
 */
import { posix } from "node:path";
import { CaseFolds, caseClash, portablePathProblem } from "../portablePaths.ts";
import { DeployError } from "./errors.ts";
import type { DeployFile, DeployFiles } from "./types.ts";

/**
 * A relative path with `/` separators, no empty, `.` or `..` segment, no control character,
 * and portable (shared/portablePaths.ts).
 * @throws DeployError `invalid_config` naming the path.
 */
export function normalizeFilePath(path: string): string {
  const cleaned = path.replace(/\\/g, "/").replace(/^(\.\/)+/, "").replace(/\/{2,}/g, "/");
  const segments = cleaned.split("/");
  const bad =
    cleaned === "" ||
    cleaned.startsWith("/") ||
    cleaned.endsWith("/") ||
    hasControlCharacter(cleaned) ||
    segments.some((segment) => segment === "." || segment === "..");
  if (bad) throw new DeployError("invalid_config", `Invalid file path in the generation: ${JSON.stringify(path)}.`);
  const problem = portablePathProblem(cleaned);
  if (problem !== null) throw new DeployError("invalid_config", `Invalid file path in the generation: ${JSON.stringify(path)}: ${problem}.`);
  return cleaned;
}

/** The paths of one output, checked one by one: each normalised, none twice, none clashing in case with an earlier one. */
export class PathCheck {
  private readonly seen = new Set<string>();
  private readonly folds = new CaseFolds();

  /** The normalised `path`. @throws DeployError `invalid_config` on a bad, repeated or case-clashing path. */
  add(raw: string): string {
    const path = normalizeFilePath(raw);
    if (this.seen.has(path)) throw new DeployError("invalid_config", `The generation contains ${path} twice.`);
    const clash = this.folds.add(path);
    if (clash !== null) throw new DeployError("invalid_config", `The generation's paths clash: ${caseClash(path, clash)}.`);
    this.seen.add(path);
    return path;
  }
}

/**
 * Checks every path of an output before a deployer writes any of them: the deployers check
 * as they stream, which for one that writes file by file (SFTP) would come after the files
 * before the bad one were written.
 * @throws DeployError `invalid_config` naming the first bad path.
 */
export async function checkPaths(paths: AsyncIterable<string> | Iterable<string>): Promise<void> {
  const check = new PathCheck();
  for await (const path of paths) check.add(path);
}

/** Streams the files with normalised paths. @throws DeployError on a bad, repeated or case-clashing path. */
export async function* eachFile(files: DeployFiles): AsyncGenerator<DeployFile> {
  const check = new PathCheck();
  for await (const file of files) yield { path: check.add(file.path), content: file.content };
}

/** All files in memory (git commits need them all at once). */
export async function collectFiles(files: DeployFiles): Promise<DeployFile[]> {
  const out: DeployFile[] = [];
  for await (const file of eachFile(files)) out.push(file);
  return out;
}

/** The ancestors of a relative path, outermost first (`a/b/c.txt` → `a`, `a/b`). */
export function parentDirectories(path: string): string[] {
  const parts = path.split("/").slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** Joins a remote base directory and a relative path. */
export function joinRemote(base: string, relative: string): string {
  return relative === "" ? base : posix.join(base, relative);
}

/** A deployment id made safe for remote file and branch names. */
export function safeId(deploymentId: string | number): string {
  const id = String(deploymentId).replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 64);
  if (!id || /^-+$/.test(id)) throw new DeployError("invalid_config", "The deployment id is empty.");
  return id;
}

/** Whether a text holds a control character (C0 or DEL): never valid in a remote path. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
