/**
 * Early checks of a template file's name and repeat path, so that a file which could never
 * render (a bad placeholder, an unknown filter, a name that leaves the output folder
 * whatever its values) is refused when it is saved rather than when it runs.
 */
import { checkTemplate, formatIssue, safeOutputPath, UnsafePathError } from "../template/index.ts";

const placeholder = /\{:[\s\S]*?:\}/g;

/** Problems of a file name (with placeholders) and repeat path; empty when it is fine. */
export function checkFileName(fileName: string, repeat: string | null | undefined): string[] {
  const check = checkTemplate({ content: "", files: [{ file_name: fileName, content: "", repeat: repeat ?? null }] });
  if (!check.valid) return check.errors.map((issue) => formatIssue(issue));
  // Every placeholder stands for one plain path part at run time (the engine checks the
  // values); what is written around them must already be a safe relative path.
  try {
    safeOutputPath(fileName.replace(placeholder, "x"));
  } catch (error) {
    if (error instanceof UnsafePathError) return [`The file name ${JSON.stringify(fileName)} is not a safe relative path: ${error.message}.`];
    throw error;
  }
  return [];
}
