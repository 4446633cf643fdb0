/**
 * Forms and reports of a project: each binds one table of one of the project's parsed
 * schemas. A form lists fields of that table and places them in its layout; a report has a
 * banded layout, a grouping and sorting pattern and images. Used by the routes, the
 * bundle section and the template scope.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { invalidField } from "../errors.ts";
import { formLayout, reportLayout, reportPattern, type FormLayout, type ReportLayout, type ReportPattern } from "./projectDocs.ts";
import { loadSchemaFields } from "./schemaFields.ts";

export const projectFormRow = z.object({
  id: z.number(),
  project_id: z.number(),
  schema_id: z.number(),
  table_name: z.string(),
  name: z.string(),
  description: z.string(),
  layout: formLayout,
  created_at: z.date(),
  updated_at: z.date(),
});
export type ProjectFormRow = z.infer<typeof projectFormRow>;
const formColumns = sql.fragment`id, project_id, schema_id, table_name, name, description, layout, created_at, updated_at`;

export const formFieldRow = z.object({ id: z.number(), form_id: z.number(), field_name: z.string(), label: z.string(), position: z.number() });
export type FormFieldRow = z.infer<typeof formFieldRow>;

export const projectReportRow = z.object({
  id: z.number(),
  project_id: z.number(),
  schema_id: z.number(),
  table_name: z.string(),
  name: z.string(),
  description: z.string(),
  layout: reportLayout,
  pattern: reportPattern,
  created_at: z.date(),
  updated_at: z.date(),
});
export type ProjectReportRow = z.infer<typeof projectReportRow>;
const reportColumns = sql.fragment`id, project_id, schema_id, table_name, name, description, layout, pattern, created_at, updated_at`;

export const reportImageRow = z.object({
  id: z.number(),
  report_id: z.number(),
  storage_key: z.string(),
  content_type: z.string(),
  byte_size: z.number(),
  width: z.number(),
  height: z.number(),
  sha256: z.string(),
  created_at: z.date(),
});
export type ReportImageRow = z.infer<typeof reportImageRow>;

export type Kind = "form" | "report";
const tableOf = (kind: Kind) => (kind === "form" ? sql.identifier(["project_forms"]) : sql.identifier(["project_reports"]));

/** The fields of `tableName` in schema `schemaId` of the project. @throws 422 when the schema or table is not the project's */
export async function tableFields(conn: CommonQueryMethods, projectId: number, schemaId: number, tableName: string): Promise<Set<string>> {
  const tables = await loadSchemaFields(conn, projectId, schemaId);
  if (tables.size === 0) {
    const exists = await conn.exists(sql.type(z.object({}))`select 1 from schemas where id = ${schemaId} and project_id = ${projectId} and status = 'ready'`);
    if (!exists) throw invalidField("schema_id", "The schema is not a parsed schema of this project.");
  }
  const fields = tables.get(tableName);
  if (!fields) throw invalidField("table_name", `The table ${tableName} is not a table of the schema.`);
  return fields;
}

export async function listForms(conn: CommonQueryMethods, projectId: number): Promise<readonly ProjectFormRow[]> {
  return conn.any(sql.type(projectFormRow)`select ${formColumns} from project_forms where project_id = ${projectId} order by id`);
}
export async function findForm(conn: CommonQueryMethods, projectId: number, id: number, lock = false): Promise<ProjectFormRow | null> {
  return conn.maybeOne(sql.type(projectFormRow)`
    select ${formColumns} from project_forms where id = ${id} and project_id = ${projectId} ${lock ? sql.fragment`for update` : sql.fragment``}`);
}
export async function formFields(conn: CommonQueryMethods, formIds: readonly number[]): Promise<readonly FormFieldRow[]> {
  if (formIds.length === 0) return [];
  return conn.any(sql.type(formFieldRow)`
    select id, form_id, field_name, label, position from project_form_fields where form_id = any(${sql.array([...formIds], "int8")}) order by form_id, position, id`);
}
export async function listReports(conn: CommonQueryMethods, projectId: number): Promise<readonly ProjectReportRow[]> {
  return conn.any(sql.type(projectReportRow)`select ${reportColumns} from project_reports where project_id = ${projectId} order by id`);
}
export async function findReport(conn: CommonQueryMethods, projectId: number, id: number, lock = false): Promise<ProjectReportRow | null> {
  return conn.maybeOne(sql.type(projectReportRow)`
    select ${reportColumns} from project_reports where id = ${id} and project_id = ${projectId} ${lock ? sql.fragment`for update` : sql.fragment``}`);
}
export async function reportImages(conn: CommonQueryMethods, reportIds: readonly number[]): Promise<readonly ReportImageRow[]> {
  if (reportIds.length === 0) return [];
  return conn.any(sql.type(reportImageRow)`
    select id, report_id, storage_key, content_type, byte_size, width, height, sha256, created_at from project_report_images
    where report_id = any(${sql.array([...reportIds], "int8")}) order by report_id, id`);
}

export interface BindingInput {
  name: string;
  description: string;
  schema_id: number;
  table_name: string;
}

/**
 * Creates a form or a report bound to a table of the project, checked unless `asWritten`
 * (a bundle's import: a project keeps its forms and reports when a re-parse drops their
 * table or fields, so its export must import as it is).
 */
export async function insertBound(tx: CommonQueryMethods, kind: Kind, projectId: number, userId: number | null, input: BindingInput, asWritten = false): Promise<number> {
  if (!asWritten) await tableFields(tx, projectId, input.schema_id, input.table_name);
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into ${tableOf(kind)} (project_id, schema_id, table_name, name, description, created_by)
    values (${projectId}, ${input.schema_id}, ${input.table_name}, ${input.name}, ${input.description}, ${userId})
    returning id`);
}

/** Updates name, description or binding; a new table drops what named the old one's fields (form fields, layout, pattern). */
export async function updateBound(tx: CommonQueryMethods, kind: Kind, row: { id: number; project_id: number; schema_id: number; table_name: string }, changes: Partial<BindingInput>): Promise<void> {
  const schemaId = changes.schema_id ?? row.schema_id;
  const tableName = changes.table_name ?? row.table_name;
  const rebound = schemaId !== row.schema_id || tableName !== row.table_name;
  if (rebound) await tableFields(tx, row.project_id, schemaId, tableName);
  const sets = Object.entries(changes).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
  if (rebound && kind === "form") {
    await tx.query(sql.type(ignoredRow)`delete from project_form_fields where form_id = ${row.id}`);
    sets.push(sql.fragment`layout = jsonb_set(layout, '{items}', '[]')`);
  }
  if (rebound && kind === "report") sets.push(sql.fragment`pattern = '{"group_by": [], "sort_by": []}'`);
  sets.push(sql.fragment`updated_at = now()`);
  await tx.query(sql.type(ignoredRow)`update ${tableOf(kind)} set ${sql.join(sets, sql.fragment`, `)} where id = ${row.id}`);
}

/**
 * Adds a field of the form's table.
 * @throws 422 on `table_name` when a re-parse removed the form's table, on `field_name` when it is not a field of the table or already on the form
 */
export async function addFormField(tx: CommonQueryMethods, form: ProjectFormRow, fieldName: string, label: string | undefined): Promise<number> {
  const fields = (await loadSchemaFields(tx, form.project_id, form.schema_id)).get(form.table_name);
  if (!fields) {
    throw invalidField("table_name", `The form's table ${form.table_name} is no longer in its schema (a new parse removed it); bind the form to another table to add fields.`);
  }
  if (!fields.has(fieldName)) throw invalidField("field_name", `The field ${fieldName} is not a field of ${form.table_name}.`);
  const id = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    insert into project_form_fields (form_id, field_name, label, position)
    values (${form.id}, ${fieldName}, ${label ?? fieldName},
      (select coalesce(max(position) + 1, 0) from project_form_fields where form_id = ${form.id}))
    on conflict (form_id, field_name) do nothing returning id`);
  if (id === null) throw invalidField("field_name", `The field ${fieldName} is already on the form.`);
  await touch(tx, "form", form.id);
  return id;
}

/** Removes a field and its layout items. */
export async function removeFormField(tx: CommonQueryMethods, form: ProjectFormRow, field: FormFieldRow): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from project_form_fields where id = ${field.id}`);
  const layout: FormLayout = { ...form.layout, items: form.layout.items.filter((item) => item.field_name !== field.field_name) };
  await tx.query(sql.type(ignoredRow)`update project_forms set layout = ${sql.jsonb(layout as never)}, updated_at = now() where id = ${form.id}`);
}

export async function saveFormLayout(tx: CommonQueryMethods, formId: number, layout: FormLayout): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update project_forms set layout = ${sql.jsonb(layout as never)}, updated_at = now() where id = ${formId}`);
}
export async function saveReportDoc(tx: CommonQueryMethods, reportId: number, column: "layout" | "pattern", doc: ReportLayout | ReportPattern): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update project_reports set ${sql.identifier([column])} = ${sql.jsonb(doc as never)}, updated_at = now() where id = ${reportId}`);
}

export async function touch(tx: CommonQueryMethods, kind: Kind, id: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update ${tableOf(kind)} set updated_at = now() where id = ${id}`);
}
