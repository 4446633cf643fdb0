/**
 * Normalised template text for the plagiarism check: a copy with renamed variables and
 * reformatted whitespace must read the same as its original. Identifiers inside the
 * template language's tags (`{: … :}`, DESIGN §10) are renamed `v1`, `v2`, … in order of
 * first appearance (keywords, filters and literals kept); whitespace runs become one space.
 */
import { createHash } from "node:crypto";

const TAG = /\{:([\s\S]*?):\}/g;
const KEYWORDS = new Set([
  "for", "in", "endfor", "if", "elseif", "else", "endif", "code", "codeend", "include", "not", "and", "or", "true", "false", "null",
  "loop", "index", "number", "first", "last", "item",
  "pascal", "camel", "snake", "kebab", "upper", "lower", "plural", "singular", "json",
]);

/** Renames placeholder identifiers through `names` (shared across one template's texts). */
function renameTags(text: string, names: Map<string, string>): string {
  return text.replace(TAG, (_tag, inner: string) => {
    // Quoted literals and include paths stay as written.
    if (/^\s*include\s*:/.test(inner)) return `{:${inner.trim()}:}`;
    const renamed = inner.replace(/("[^"]*"|'[^']*')|[A-Za-z_][A-Za-z0-9_]*/g, (word, quoted: string | undefined) => {
      if (quoted !== undefined || KEYWORDS.has(word)) return word;
      let name = names.get(word);
      if (!name) names.set(word, (name = `v${names.size + 1}`));
      return name;
    });
    return `{:${renamed.replace(/\s+/g, "")}:}`;
  });
}

/** Collapses whitespace. */
const squeeze = (text: string) => text.replace(/\s+/g, " ").trim();

/** A frozen template's text parts. */
export interface NormalizableTemplate {
  content: string;
  variables: { name: string }[];
  files: { file_name: string; content: string }[];
}

/** The normalised text of a package and the hash of each normalised file. */
export function normalizePackage(templates: NormalizableTemplate[]): { normalized: string; fileHashes: string[] } {
  const parts: string[] = [];
  const fileHashes: string[] = [];
  for (const template of templates) {
    const names = new Map<string, string>();
    // Variables are named by the order their declarations appear, then by use.
    for (const variable of template.variables) if (!names.has(variable.name)) names.set(variable.name, `v${names.size + 1}`);
    parts.push(squeeze(renameTags(template.content, names)));
    for (const file of template.files) {
      const text = squeeze(`${renameTags(file.file_name, names)} ${renameTags(file.content, names)}`);
      parts.push(text);
      if (file.content.trim()) fileHashes.push(createHash("sha256").update(text).digest("hex"));
    }
  }
  return { normalized: parts.filter(Boolean).join("\n"), fileHashes };
}
