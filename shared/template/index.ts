/**
 * The template engine (`engine_type` = `ultimate`, DESIGN §10). See docs/notes/template.md.
 *
 * - checkTemplate(source) → {valid, errors}
 * - renderTemplate({content, files, scope, mode, limits}) → Promise<{output, files, warnings}>
 * - planTemplate({content, files, scope}) → {paths, warnings}
 * - safeOutputPath(path) → normalised path (throws UnsafePathError)
 */
export { checkTemplate, planTemplate, renderTemplate } from "./render.ts";
export { safeOutputPath, UnsafePathError } from "./paths.ts";
export { TemplateError, formatIssue } from "./errors.ts";
export { filters, toText, words } from "./filters.ts";
export { pluralize, singularize } from "./inflect.ts";
export { cachedTemplates } from "./compile.ts";
export { sandboxHost } from "./sandbox/host.ts";
export * from "./types.ts";
