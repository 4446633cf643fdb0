/**
 * Signed webhook payloads. The body is the JSON object
 * `{"event":…,"project_id":…,"code_generation_id":…,"timestamp":…,"signature":"<hex>"}` with
 * the members in that order and no whitespace (JSON.stringify). `signature` is the hex
 * HMAC-SHA256, keyed with the webhook's `secret_key` (its UTF-8 bytes), of the exact same
 * body without the `signature` member, i.e. of
 * `{"event":…,"project_id":…,"code_generation_id":…,"timestamp":…}`: the body's bytes with the
 * final `,"signature":"<hex>"` removed. Header `X-Signature-256: sha256=<hex>` carries the
 * same value.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The payload of the spec, before signing. */
export interface WebhookPayload {
  event: "code_generated" | "manual_trigger" | "scheduled";
  project_id: number;
  code_generation_id: number | null;
  /** ISO 8601. */
  timestamp: string;
}

/** The string that is signed: the payload's members in the documented order. */
export function unsignedBody(payload: WebhookPayload): string {
  return JSON.stringify({ event: payload.event, project_id: payload.project_id, code_generation_id: payload.code_generation_id, timestamp: payload.timestamp });
}

/** Hex HMAC-SHA256 of `text` under `secret`. */
export const hmacHex = (secret: string, text: string) => createHmac("sha256", secret).update(text, "utf8").digest("hex");

/** The body to send and its signature. */
export function signPayload(payload: WebhookPayload, secret: string): { body: string; signature: string } {
  const unsigned = unsignedBody(payload);
  const signature = hmacHex(secret, unsigned);
  return { body: `${unsigned.slice(0, -1)},"signature":"${signature}"}`, signature };
}

/** Checks a received body (receivers' side, used by the tests and shown in the README). */
export function verifyBody(body: string, secret: string): boolean {
  const match = /,"signature":"([0-9a-f]{64})"}$/.exec(body);
  if (!match) return false;
  const expected = Buffer.from(hmacHex(secret, `${body.slice(0, match.index)}}`));
  const given = Buffer.from(match[1]!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
