/**
 * Translates a schema's labels into one language (shared/translation/autoTranslate.ts).
 */
import { PermanentJobError } from "../../shared/jobs/errors.ts";
import { translationsAuto } from "../../shared/jobs/kinds.ts";
import { autoTranslateSchema } from "../../shared/translation/autoTranslate.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(translationsAuto, async (payload, { deps }) => {
  const { apiUrl, apiKey } = deps.config.translation;
  if (!apiUrl || !apiKey) throw new PermanentJobError("Automatic translation is not configured.", "translation_unavailable");
  return autoTranslateSchema(deps.pool, { apiUrl, apiKey }, payload.schema_id, payload.target_language, payload.source_language);
});
