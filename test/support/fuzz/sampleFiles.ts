import { createECDH, randomBytes } from "node:crypto";

/**
 * Small files and keys the fuzz sends (in known-good body fragments and in the fixture world's
 * uploads): valid content, so that a route's checks pass and its work runs.
 */

/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

/** A 1×1 PNG file, for the image uploads. */
export const png = () => new File([PNG], "fuzz.png", { type: "image/png" });

/** A short text file, for the attachments. */
export const textFile = () => new File(["hello"], "a.txt", { type: "text/plain" });

/** A browser's PushSubscription (DESIGN §14): an https endpoint and valid P-256 and auth keys. */
export const PUSH_SUBSCRIPTION = {
  endpoint: "https://push.example.com/fuzz",
  keys: { p256dh: createECDH("prime256v1").generateKeys().toString("base64url"), auth: randomBytes(16).toString("base64url") },
};

/** A multipart body of one file and `fields`. */
export function upload(field: string, file: File, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append(field, file);
  return form;
}
