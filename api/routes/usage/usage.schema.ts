import { z } from "zod";
import { calendarDate } from "../../../shared/calendarDate.ts";
import { wholeNumber } from "../../../shared/canonicalNumbers.ts";

export const CLIENT_METRICS = ["LCP", "INP", "CLS", "TTFB", "FCP", "FID"] as const;
export const DEVICE_CLASSES = ["mobile", "tablet", "desktop"] as const;

/** The largest value each metric may take: CLS is a unitless score, the others milliseconds. */
const ceilings: Record<(typeof CLIENT_METRICS)[number], number> = { LCP: 600_000, INP: 600_000, CLS: 100, TTFB: 600_000, FCP: 600_000, FID: 600_000 };

const measure = z
  .object({
    name: z.enum(CLIENT_METRICS),
    value: z.number().min(0).finite(),
    route: z.string().trim().min(1).max(200).regex(/^\//, { error: "The route must be a path starting with /." }),
    device_class: z.enum(DEVICE_CLASSES),
  })
  .refine((m) => m.value <= ceilings[m.name], { path: ["value"], error: "The value is out of range for this metric." });

/** POST /performance-metrics (DESIGN §14). */
export const recordMetricsBody = z.object({ metrics: z.array(measure).min(1).max(50) });

const isoDay = calendarDate();

export const performanceQuery = z.object({
  from: isoDay.optional(),
  to: isoDay.optional(),
  name: z.enum([...CLIENT_METRICS, "server"]).optional(),
  route: z.string().max(200).optional(),
  device_class: z.enum([...DEVICE_CLASSES, "server"]).optional(),
});

export const percentileResource = z.object({ day: z.string(), name: z.string(), route: z.string(), count: z.number(), p50: z.number(), p75: z.number(), p95: z.number() });

/** POST /visits (DESIGN §14). */
export const visitBody = z.object({
  path: z.string().min(1).max(2000).regex(/^\//, { error: "The path must start with /." }),
  referrer: z.string().max(2000).nullable().optional(),
});

export const visitsQuery = z.object({ from: isoDay.optional(), to: isoDay.optional(), top: wholeNumber({ min: 1, max: 50, default: 10 }) });
