/**
 * Public types of the template engine (`engine_type` = `ultimate`, DESIGN §10).
 *
 * Glossary: a *source* is the text of one template part (the main content, a file's content
 * or its file name); a *unit* is the compiled function of one source; the *scope* is the JSON
 * input of a render (template variables by name); a *frame* is what a loop or a repeated file
 * adds to the scope (its element, its name, `loop`).
 */

/** One file of a template. */
export interface TemplateFile {
  /** Output path relative to the output root; may hold placeholders (`src/{:table.table_name|pascal:}.ts`). */
  file_name: string;
  /** Template text of the file. */
  content: string;
  /** Output order (ascending; ties keep input order). */
  order?: number | null;
  /** Path of a collection in the scope (e.g. `schema.tables`): the file is rendered once per element. */
  repeat?: string | null;
}

/** A whole template: its main content plus its files. */
export interface TemplateSource {
  /** Main template text; rendered into `output`. */
  content: string;
  /** Files rendered into `files` (path → content). */
  files?: TemplateFile[];
}

/** A problem found in a template, with its position (1-based line and column). */
export interface TemplateIssue {
  /** `file_name` of the file (as written), `(content)` for the main content. */
  file: string;
  line: number;
  column: number;
  message: string;
}

/** Sandbox and render limits; every field is optional on input. */
export interface TemplateLimits {
  /** Wall-clock time one code block may run (default 250 ms). */
  timeMs: number;
  /** Memory of the sandbox of one render, scope copy included (default 32 MB). */
  memoryBytes: number;
  /** Largest output of one file, of one code block and of a render's files together (default 64 MB). */
  maxOutputBytes: number;
  /** Most loop iterations of one file (default 5,000,000). */
  maxIterations: number;
  /** Wall-clock time a whole render may take, its loops and its code blocks (default 10 s; TEMPLATE_RENDER_TIME_LIMIT_MS). */
  renderTimeMs: number;
  /** When the render's budget ends (epoch ms); a run of several templates sets it once for all of them. */
  deadline?: number;
}

/** `execute` fails on a missing value; `preview` renders it empty and warns. */
export type RenderMode = "execute" | "preview";

/** Input of renderTemplate. */
export interface RenderInput extends TemplateSource {
  /** Plain JSON: variable values by name (a `schema` variable holds the parsed schema). */
  scope: Record<string, unknown>;
  /** Default `execute`. */
  mode?: RenderMode;
  limits?: Partial<TemplateLimits>;
}

/** Result of renderTemplate. */
export interface RenderResult {
  /** The rendered main content. */
  output: string;
  /** Output path → content, in file order. */
  files: Record<string, string>;
  /** Missing values met in preview mode (always empty in execute mode), the first MAX_WARNINGS of them. */
  warnings: TemplateIssue[];
  /** How many warnings there were past those listed. */
  omittedWarnings: number;
}

/** Result of checkTemplate. */
export interface CheckResult {
  valid: boolean;
  errors: TemplateIssue[];
}

/** Result of planTemplate. */
export interface PlanResult {
  /** Output paths a run would write, in file order. */
  paths: string[];
  /** Missing values met while naming files (they render empty), the first MAX_WARNINGS of them. */
  warnings: TemplateIssue[];
  /** How many warnings there were past those listed. */
  omittedWarnings: number;
}

/** Default limits (DESIGN §10: 250 ms and 32 MB per code block sandbox). */
export const defaultLimits: TemplateLimits = {
  timeMs: 250,
  memoryBytes: 32 * 1024 * 1024,
  maxOutputBytes: 64 * 1024 * 1024,
  maxIterations: 5_000_000,
  renderTimeMs: 10_000,
};

/** Most warnings a render lists; the rest are counted (`omittedWarnings`). */
export const MAX_WARNINGS = 100;

/** The `file` reported for the main content. */
export const CONTENT_FILE = "(content)";
