/**
 * Shape of a table-driven template case and the runner shared by the case tables.
 * A case renders `content` (and `files`) over `scope`, then checks the output, the files,
 * the warnings, or the one error with its file, line and column.
 */
import type { Test } from "tap";
import { renderTemplate, TemplateError, type RenderMode, type TemplateFile } from "../../../../shared/template/index.ts";

export interface Case {
  name: string;
  content?: string;
  files?: TemplateFile[];
  scope?: Record<string, unknown>;
  mode?: RenderMode;
  /** Expected `output`. */
  output?: string;
  /** Expected `files`, exactly. */
  out?: Record<string, string>;
  /** Expected warnings as `[line, column, message pattern]`. */
  warnings?: [number, number, RegExp][];
  /** Expected error: file defaults to `(content)`. */
  error?: { file?: string; line: number; column: number; message: RegExp };
}

/** A small parsed schema (DESIGN §9 shape) used by many cases. */
export const schema = {
  tables: [
    {
      table_name: "user_categories",
      fields: [
        { field_name: "id", field_type: "int", length: null, is_nullable: false, is_primary_key: true },
        { field_name: "display_name", field_type: "varchar", length: 120, is_nullable: false, is_primary_key: false },
        { field_name: "parent_id", field_type: "int", length: null, is_nullable: true, is_primary_key: false },
      ],
      constraints: [],
    },
    {
      table_name: "people",
      fields: [
        { field_name: "id", field_type: "bigint", length: null, is_nullable: false, is_primary_key: true },
        { field_name: "email", field_type: "varchar", length: 255, is_nullable: false, is_primary_key: false },
      ],
      constraints: [],
    },
  ],
};

/** Runs every case as a subtest. */
export function runCases(t: Test, cases: Case[]): void {
  for (const c of cases) {
    t.test(c.name, async (t) => {
      const render = renderTemplate({ content: c.content ?? "", files: c.files ?? [], scope: c.scope ?? {}, mode: c.mode ?? "execute" });
      if (c.error) {
        const error = await render.then(
          (r) => r,
          (e: unknown) => e,
        );
        if (!(error instanceof TemplateError)) {
          t.fail(`expected a TemplateError, got ${error instanceof Error ? error.stack : JSON.stringify(error)}`);
          return;
        }
        const issue = error.issues[0]!;
        t.same(
          { file: issue.file, line: issue.line, column: issue.column },
          { file: c.error.file ?? "(content)", line: c.error.line, column: c.error.column },
          `position of: ${issue.message}`,
        );
        t.match(issue.message, c.error.message);
        return;
      }
      const result = await render;
      if (c.output !== undefined) t.equal(result.output, c.output, "output");
      if (c.out !== undefined) t.same(result.files, c.out, "files");
      const warnings = c.warnings ?? [];
      t.equal(result.warnings.length, warnings.length, `warnings: ${JSON.stringify(result.warnings)}`);
      warnings.forEach(([line, column, message], i) => {
        const w = result.warnings[i];
        t.same([w?.line, w?.column], [line, column], `warning ${i} position`);
        t.match(w?.message ?? "", message);
      });
    });
  }
}
