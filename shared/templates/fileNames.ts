/**
 * Early checks of a template file's name and repeat path, so that a file which could never
 * render (a bad placeholder, an unknown filter, a name that leaves the output folder
 * whatever its values) is refused when it is saved rather than when it runs.
 */
import { CaseFolds, caseClash } from "../portablePaths.ts";
import { checkTemplate, formatIssue, safeOutputPath, UnsafePathError } from "../template/index.ts";

const placeholder = /\{:[\s\S]*?:\}/g;

/**
 * Why the text written around a file name's placeholders is not a safe, portable relative path
 * (shared/template/paths.ts), or null. Every placeholder stands for one plain path part at run
 * time (the engine checks the values), so it is read as `x`.
 */
export function fileNamePathProblem(fileName: string): string | null {
  try {
    safeOutputPath(fileName.replace(placeholder, "x"));
    return null;
  } catch (error) {
    if (error instanceof UnsafePathError) return `The file name ${JSON.stringify(fileName)} is not a safe relative path: ${error.message}.`;
    throw error;
  }
}

/** Problems of a file name (with placeholders) and repeat path; empty when it is fine. */
export function checkFileName(fileName: string, repeat: string | null | undefined): string[] {
  const check = checkTemplate({ content: "", files: [{ file_name: fileName, content: "", repeat: repeat ?? null }] });
  if (!check.valid) return check.errors.map((issue) => formatIssue(issue));
  const problem = fileNamePathProblem(fileName);
  return problem === null ? [] : [problem];
}

/**
 * The output-path problems of one template's file names: each name's own (fileNamePathProblem)
 * and, among names without placeholders, two that differ only in case or where one is the
 * other's folder (shared/portablePaths.ts CaseFolds). For templates saved before a rule
 * existed, e.g. in the store: they would fail only when executed.
 */
export function fileNamesPathProblems(files: readonly { file_name: string }[]): string[] {
  const problems: string[] = [];
  const folds = new CaseFolds();
  for (const { file_name } of files) {
    const problem = fileNamePathProblem(file_name);
    if (problem !== null) problems.push(problem);
    else if (!file_name.includes("{:")) {
      const path = safeOutputPath(file_name);
      const earlier = folds.add(path);
      if (earlier !== null) problems.push(`${caseClash(path, earlier)}.`);
    }
  }
  return problems;
}
