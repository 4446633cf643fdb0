/**
 * Secrets at rest: AES-256-GCM under APP_KEY. A sealed value is
 * `v1 ‖ 12-byte IV ‖ 16-byte tag ‖ ciphertext`; the version byte leaves room for key
 * rotation. Also HMAC signing for links (e-mail verification) and SHA-256 for tokens
 * that are stored only as hashes.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const VERSION = 1;

/** Encrypts `plain` under `key` (32 bytes). */
export function seal(key: Buffer, plain: string | Buffer): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

/** Decrypts a value made by `seal`. @throws when it was tampered with or sealed under another key. */
export function open(key: Buffer, sealed: Buffer): Buffer {
  if (sealed.length < 29 || sealed[0] !== VERSION) throw new Error("Unknown sealed value format");
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 13));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]);
}

/** `open` as UTF-8 text. */
export const openText = (key: Buffer, sealed: Buffer) => open(key, sealed).toString("utf8");

/** SHA-256 digest (for tokens stored only as hashes). */
export const sha256 = (value: string | Buffer) => createHash("sha256").update(value).digest();

/** Hex HMAC-SHA256 of `data` under a key derived from APP_KEY for `purpose`. */
export function sign(key: Buffer, purpose: string, data: string): string {
  const derived = createHmac("sha256", key).update(`schemaforge:${purpose}`).digest();
  return createHmac("sha256", derived).update(data).digest("hex");
}

/** Constant-time comparison of a signature made by `sign`. */
export function verifySignature(key: Buffer, purpose: string, data: string, signature: string): boolean {
  const expected = Buffer.from(sign(key, purpose, data));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Constant-time equality of two buffers of possibly different length. */
export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A random URL-safe token of `bytes` bytes of entropy. */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString("base64url");
