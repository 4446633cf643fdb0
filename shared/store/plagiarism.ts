/**
 * Plagiarism check: a version's normalised content (normalize.ts) against the current
 * version of every other published store template, by pg_trgm similarity on the indexed
 * `normalized` column, plus exact hashes of normalised files. The result is stored.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

/** Candidates below this trigram similarity are not read at all (the index's threshold). */
const PREFILTER = 0.3;
/** Templates at least this similar (0–100) are listed in `similar_templates`. */
export const LIST_FROM = 50;

export const checkRow = z.object({
  id: z.number(),
  store_template_id: z.number(),
  version_id: z.number().nullable(),
  is_duplicate: z.boolean(),
  similarity_score: z.number(),
  similar_templates: z.array(z.coerce.number()),
  checked_at: z.date(),
});
export type CheckRow = z.infer<typeof checkRow>;

const candidate = z.object({ id: z.number(), score: z.number(), shared_files: z.number(), files: z.number() });

/**
 * Compares version `versionId` of `storeTemplateId` with the other published templates and
 * records the result; `threshold` (0–100) decides `is_duplicate`.
 */
export async function checkPlagiarism(
  tx: CommonQueryMethods,
  input: { storeTemplateId: number; versionId: number; threshold: number; checkedBy: number | null },
): Promise<CheckRow> {
  await tx.query(sql.type(z.object({}))`select set_config('pg_trgm.similarity_threshold', ${String(PREFILTER)}, true)`);
  const rows = await tx.any(sql.type(candidate)`
    with mine as (select normalized, file_hashes from store_template_versions where id = ${input.versionId})
    select st.id, round(similarity(v.normalized, mine.normalized) * 100)::int as score,
      cardinality(array(select unnest(v.file_hashes) intersect select unnest(mine.file_hashes)))::int as shared_files,
      greatest(cardinality(mine.file_hashes), 1)::int as files
    from mine, store_templates st
    join store_template_versions v on v.id = st.current_version_id
    where st.status = 'published' and st.id <> ${input.storeTemplateId}
      and (v.normalized % mine.normalized or v.file_hashes && mine.file_hashes)
    order by score desc
    limit 50`);
  // An exact copy of files counts as the share of the files it copies.
  const scored = rows
    .map((row) => ({ id: row.id, score: Math.min(100, Math.max(row.score, Math.round((100 * row.shared_files) / row.files))) }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
  const best = scored[0]?.score ?? 0;
  const similar = scored.filter((row) => row.score >= LIST_FROM).map((row) => row.id);
  return tx.one(sql.type(checkRow)`
    insert into store_plagiarism_checks (store_template_id, version_id, is_duplicate, similarity_score, similar_templates, checked_by)
    values (${input.storeTemplateId}, ${input.versionId}, ${best >= input.threshold}, ${best}, ${sql.array(similar, "int8")}, ${input.checkedBy})
    returning id, store_template_id, version_id, is_duplicate, similarity_score, similar_templates, checked_at`);
}

/** The spec's Plagiarism check resource. */
export const presentCheck = (row: CheckRow) => ({
  is_duplicate: row.is_duplicate,
  similarity_score: row.similarity_score,
  similar_templates: row.similar_templates,
  checked_at: row.checked_at.toISOString(),
});
