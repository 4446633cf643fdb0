/**
 * Automatic translation of a schema's labels into one language: every table and field of the
 * current parse gets a label, translated from the source language's label where one exists
 * and from the humanised name otherwise (`order_items` → "Order items"). Entries a person
 * wrote or edited (`source = 'human'`) are kept: they are not sent, and the upsert never
 * overwrites them, even one written while the job ran.
 *
 * Labels are content of the schema's project: like a parse or a generation, the job writes
 * them only while the project accepts changes (shared/projects/writable.ts), checked before
 * the provider is asked and again, under the project's share lock, with every batch written.
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import { PermanentJobError } from "../jobs/errors.ts";
import { lockProjectForContent } from "../projects/writable.ts";
import { qualifiedName } from "../schemas/store.ts";
import type { ParsedSchema } from "../sqlddl/types.ts";
import { TRANSLATION_BATCH, translateBatch, type TranslationProvider } from "./deepl.ts";

/** `order_items` / `orderItems` → "Order items". */
export function humanize(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_\-.]+/g, " ").trim().toLowerCase();
  return words ? words[0]!.toUpperCase() + words.slice(1) : name;
}

interface Entry {
  table: string;
  field: string | null;
}
const keyOf = (e: { table_name: string; field_name: string | null }) => `${e.table_name}\u0000${e.field_name ?? ""}`;

const existingRow = z.object({ language: z.string(), table_name: z.string(), field_name: z.string().nullable(), label: z.string(), source: z.string() });

export interface AutoTranslateResult {
  translated: number;
  kept: number;
}

/**
 * Translates schema `schemaId` into `target`.
 * @throws PermanentJobError when the schema is gone or not parsed; AppError 423, 402, 409, 404 when its project takes no changes now
 */
export async function autoTranslateSchema(pool: DatabasePool, provider: TranslationProvider, schemaId: number, target: string, sourceLanguage: string | null): Promise<AutoTranslateResult> {
  const schema = await pool.maybeOne(sql.type(z.object({ project_id: z.number(), parsed: z.unknown() }))`
    select project_id, parsed from schemas where id = ${schemaId} and status = 'ready'`);
  if (!schema) throw new PermanentJobError("The schema is gone or not parsed.", "not_found");
  const refusal = await pool.transaction((tx) => lockProjectForContent(tx, schema.project_id));
  if (refusal) throw refusal;
  const tables = (schema.parsed as ParsedSchema).tables;
  const entries: Entry[] = tables.flatMap((t) => [{ table: qualifiedName(t), field: null }, ...t.fields.map((f) => ({ table: qualifiedName(t), field: f.field_name }))]);
  const existing = await pool.any(sql.type(existingRow)`
    select language, table_name, field_name, label, source from schema_translations
    where schema_id = ${schemaId} and language in (${target}, ${sourceLanguage ?? target})`);
  const human = new Set(existing.filter((e) => e.language === target && e.source === "human").map(keyOf));
  const sourceLabels = new Map(existing.filter((e) => sourceLanguage !== null && e.language === sourceLanguage).map((e) => [keyOf(e), e.label]));
  const todo = entries.filter((e) => !human.has(keyOf({ table_name: e.table, field_name: e.field })));
  let translated = 0;
  for (let start = 0; start < todo.length; start += TRANSLATION_BATCH) {
    const batch = todo.slice(start, start + TRANSLATION_BATCH);
    const texts = batch.map((e) => sourceLabels.get(keyOf({ table_name: e.table, field_name: e.field })) ?? humanize(e.field ?? e.table.split(".").at(-1)!));
    const labels = await translateBatch(provider, texts, target, sourceLanguage ?? undefined);
    await pool.transaction(async (tx) => {
      const refusal = await lockProjectForContent(tx, schema.project_id);
      if (refusal) throw refusal;
      await tx.query(sql.type(ignoredRow)`
        insert into schema_translations (schema_id, language, table_name, field_name, label, source)
        select ${schemaId}, ${target}, t, nullif(f, ''), left(l, 500), 'machine'
        from unnest(${sql.array(batch.map((e) => e.table), "text")}, ${sql.array(batch.map((e) => e.field ?? ""), "text")}, ${sql.array(labels, "text")}) as x(t, f, l)
        on conflict (schema_id, language, table_name, coalesce(field_name, '')) do update
          set label = excluded.label, updated_at = now() where schema_translations.source = 'machine'`);
    });
    translated += batch.length;
  }
  return { translated, kept: entries.length - todo.length };
}
