/**
 * Store templates whose file names break the portable output path rules (shared/portablePaths.ts):
 * versions frozen before a rule existed. Such a version would fail only when a buyer executes
 * it, so buying, installing and publishing it are refused first (409 `non_portable_path`, one
 * message naming the template and the path, the same for buyer and seller), before any credit or
 * payment is taken.
 */
import { AppError } from "../errors.ts";
import { fileNamesPathProblems } from "../templates/fileNames.ts";
import type { FrozenTemplate } from "./versions.ts";

/** Every problem of a version's file names, each naming its template; empty when it is fine. */
export function versionPathProblems(content: readonly Pick<FrozenTemplate, "name" | "files">[]): string[] {
  return content.flatMap((template) => fileNamesPathProblems(template.files).map((problem) => `Template ${JSON.stringify(template.name)}: ${problem}`));
}

/** How many problems one message lists. */
const listed = 5;

/**
 * @throws 409 `non_portable_path` when a file name of the version is not a portable output path;
 * `action` says what was refused ("bought", "installed", "published").
 */
export function assertPortableVersion(content: readonly Pick<FrozenTemplate, "name" | "files">[], action: string): void {
  const problems = versionPathProblems(content);
  if (!problems.length) return;
  const more = problems.length > listed ? ` (and ${problems.length - listed} more)` : "";
  throw new AppError(
    409,
    "non_portable_path",
    `This store template cannot be ${action}: its files would not generate on every system until the seller renames them and publishes again. ${problems.slice(0, listed).join(" ")}${more}`,
  );
}
