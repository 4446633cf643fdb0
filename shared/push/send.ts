/**
 * Delivering one Web Push message (RFC 8030) to one subscription: web-push encrypts the
 * payload (aes128gcm, RFC 8291) and signs the VAPID header (RFC 8292); the request goes out
 * through the guarded fetch, since the endpoint is a URL a browser (so a user) supplied.
 */
import webpush from "web-push";
import type { Config } from "../config.ts";
import { createGuardedFetch } from "../net/guardedFetch.ts";
import { networkPolicy } from "../net/networkGuard.ts";
import type { PushTarget } from "./store.ts";

/** What the push service said: delivered, gone for good (404/410: remove it), or worth a retry. */
export type PushOutcome = { ok: true; status: number } | { ok: false; gone: boolean; status: number | null; error: string };

/** Whether push is configured (both VAPID keys). */
export const pushEnabled = (config: Pick<Config, "push">) => Boolean(config.push.vapidPublicKey && config.push.vapidPrivateKey);

/** Sends `payload` (JSON text) to `target`; never throws. */
export async function sendPush(config: Config, target: PushTarget, payload: string, options: { ttlS?: number; urgency?: "low" | "normal" | "high" } = {}): Promise<PushOutcome> {
  const { vapidPublicKey, vapidPrivateKey, vapidSubject, timeoutMs } = config.push;
  if (!vapidPublicKey || !vapidPrivateKey) return { ok: false, gone: false, status: null, error: "Push is not configured." };
  let details: ReturnType<typeof webpush.generateRequestDetails>;
  try {
    details = webpush.generateRequestDetails({ endpoint: target.endpoint, keys: target.keys }, payload, {
      vapidDetails: { subject: vapidSubject, publicKey: vapidPublicKey, privateKey: vapidPrivateKey },
      contentEncoding: "aes128gcm",
      TTL: options.ttlS ?? 24 * 3600,
      urgency: options.urgency ?? "normal",
    });
  } catch (error) {
    // Keys the browser never could have made: the subscription is useless.
    return { ok: false, gone: true, status: null, error: `The subscription cannot be encrypted to: ${(error as Error).message}` };
  }
  const headers = Object.fromEntries(Object.entries(details.headers).filter(([name]) => name.toLowerCase() !== "content-length").map(([n, v]) => [n, String(v)]));
  const guarded = createGuardedFetch(networkPolicy(config));
  try {
    const response = await guarded.fetch(details.endpoint, { method: "POST", headers, body: details.body ?? null, redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    return { ok: false, gone: response.status === 404 || response.status === 410, status: response.status, error: `The push service answered HTTP ${response.status}.` };
  } catch (error) {
    const inner = error instanceof Error && error.cause instanceof Error ? error.cause : (error as Error);
    return { ok: false, gone: false, status: null, error: `The push request failed: ${inner.message}` };
  } finally {
    await guarded.close();
  }
}
