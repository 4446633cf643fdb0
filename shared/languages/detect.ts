/**
 * The locales the service speaks and how a client's language is guessed: from a text sample
 * (franc-min, trigram statistics over the most spoken languages) when it is long enough to
 * tell, else from `Accept-Language` (RFC 9110 quality values), else the default.
 */
import { francAll } from "franc-min";

export const LOCALES = [
  { code: "en", name: "English", native_name: "English", iso639_3: "eng" },
  { code: "de", name: "German", native_name: "Deutsch", iso639_3: "deu" },
] as const;
export type LocaleCode = (typeof LOCALES)[number]["code"];

const byIso3 = new Map<string, LocaleCode>(LOCALES.map((l) => [l.iso639_3, l.code]));
const supported = new Set<string>(LOCALES.map((l) => l.code));

/** The `Accept-Language` ranges in order of preference (quality, then position), primary subtags lower-cased. */
export function acceptedLanguages(header: string | undefined): { tag: string; q: number }[] {
  if (!header) return [];
  return header
    .split(",")
    .slice(0, 50)
    .map((part, index) => {
      const [range, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([01](\.\d{0,3})?)\s*$/.exec(p)).find(Boolean);
      return { tag: (range ?? "").trim().toLowerCase(), q: q ? Number(q[1]) : 1, index };
    })
    .filter((r) => /^([a-z]{1,8}(-[a-z0-9]{1,8})*|\*)$/.test(r.tag) && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map(({ tag, q }) => ({ tag, q }));
}

export interface Detection {
  language: LocaleCode;
  source: "text" | "header" | "default";
  /** For a text: the supported languages with franc's score (0–1, higher is likelier). */
  scores: { language: LocaleCode; score: number }[];
}

/** Detects the language of `text` (at least 20 letters to try) or from `acceptLanguage`, else `fallback`. */
export function detectLanguage(text: string | undefined, acceptLanguage: string | undefined, fallback: LocaleCode): Detection {
  if (text && text.replace(/[^\p{L}]/gu, "").length >= 20) {
    const scores = francAll(text, { only: LOCALES.map((l) => l.iso639_3), minLength: 20 })
      .filter(([code]) => byIso3.has(code))
      .map(([code, score]) => ({ language: byIso3.get(code)!, score: Math.round(score * 1000) / 1000 }));
    if (scores.length > 0 && scores[0]!.score > 0) return { language: scores[0]!.language, source: "text", scores };
  }
  for (const { tag } of acceptedLanguages(acceptLanguage)) {
    const primary = tag.split("-")[0]!;
    if (supported.has(primary)) return { language: primary as LocaleCode, source: "header", scores: [] };
  }
  return { language: fallback, source: "default", scores: [] };
}
