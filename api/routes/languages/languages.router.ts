/**
 * GET /languages: the locales the service speaks, with names and how complete their texts
 * are. POST /languages/detect: a client's language from a text sample or Accept-Language.
 * Both public.
 */
import { z } from "zod";
import { detectLanguage, LOCALES } from "../../../shared/languages/detect.ts";
import { mailCompleteness } from "../../../shared/mail/templates.ts";
import { defineRoute } from "../route.ts";

const languageResource = z.object({ code: z.string(), name: z.string(), native_name: z.string(), completeness: z.number(), is_default: z.boolean() });

const list = defineRoute({
  method: "get",
  path: "/languages",
  summary: "The languages the service speaks (completeness: share of its texts available, 0–1)",
  tags: ["Languages"],
  auth: "public",
  responses: { 200: { description: "Languages", schema: z.object({ data: z.array(languageResource) }) } },
  handler: async (ctx) => {
    const fallback = (await ctx.deps.settings.get()).default_language;
    ctx.body = { data: LOCALES.map((l) => ({ code: l.code, name: l.name, native_name: l.native_name, completeness: mailCompleteness(l.code), is_default: l.code === fallback })) };
  },
});

const detect = defineRoute({
  method: "post",
  path: "/languages/detect",
  summary: "Detect a language from a text sample (at least 20 letters) or the Accept-Language header",
  tags: ["Languages"],
  auth: "public",
  body: z.object({ text: z.string().max(10_000).optional() }),
  responses: {
    200: {
      description: "The detected language and where it came from",
      schema: z.object({ language: z.string(), source: z.enum(["text", "header", "default"]), scores: z.array(z.object({ language: z.string(), score: z.number() })) }),
    },
  },
  handler: async (ctx, { body }) => {
    const fallback = (await ctx.deps.settings.get()).default_language === "de" ? "de" : "en";
    ctx.body = detectLanguage(body.text, ctx.get("accept-language") || undefined, fallback);
  },
});

export const languageRoutes = [list, detect];
