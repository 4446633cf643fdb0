import { z } from "zod";

export const healthResponse = z.object({
  status: z.enum(["ok", "degraded"]),
  version: z.string(),
  uptime_s: z.number(),
  database: z.object({ ok: z.boolean(), latency_ms: z.number().nullable(), error: z.string().nullable() }),
  queue: z.object({
    ok: z.boolean(),
    pending: z.number().nullable(),
    running: z.number().nullable(),
    failed_last_hour: z.number().nullable(),
    workers: z.number().nullable(),
  }),
  realtime: z.object({ listening: z.boolean(), connections: z.number() }),
});

export const realtimeConfigResponse = z.object({
  key: z.string(),
  ws_path: z.string(),
  auth_endpoint: z.string(),
  protocol: z.number(),
  activity_timeout: z.number(),
});
