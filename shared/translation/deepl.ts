/**
 * The translation provider, spoken in the DeepL API's request shape: `POST {url}/v2/translate`
 * with `Authorization: DeepL-Auth-Key {key}` and JSON `{text: [...], target_lang, source_lang?}`,
 * answered `{translations: [{detected_source_language, text}]}` in the order sent. DeepL takes
 * at most 50 texts a request, so callers send batches of that size.
 */
import { PermanentJobError } from "../jobs/errors.ts";

export const TRANSLATION_BATCH = 50;

export interface TranslationProvider {
  apiUrl: string;
  apiKey: string;
  timeoutMs?: number;
}

/**
 * Translates `texts` (at most TRANSLATION_BATCH) into `target`.
 * @throws PermanentJobError for answers a retry cannot fix (bad key, bad language), Error otherwise
 */
export async function translateBatch(provider: TranslationProvider, texts: string[], target: string, source?: string): Promise<string[]> {
  const response = await fetch(`${provider.apiUrl}/v2/translate`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `DeepL-Auth-Key ${provider.apiKey}` },
    body: JSON.stringify({ text: texts, target_lang: target.toUpperCase(), ...(source ? { source_lang: source.toUpperCase() } : {}) }),
    signal: AbortSignal.timeout(provider.timeoutMs ?? 30_000),
  });
  if (response.status === 429 || response.status >= 500) {
    await response.body?.cancel();
    throw new Error(`The translation provider answered HTTP ${response.status}; retrying later.`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new PermanentJobError(`The translation provider refused the request (HTTP ${response.status}).`);
  }
  const body = (await response.json()) as { translations?: { text?: unknown }[] };
  const out = (body.translations ?? []).map((t) => (typeof t.text === "string" ? t.text : ""));
  if (out.length !== texts.length || out.some((t) => t === "")) throw new Error("The translation provider answered with a different number of texts.");
  return out;
}
