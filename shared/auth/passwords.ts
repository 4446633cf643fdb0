/**
 * Password hashing with argon2id (OWASP parameters: 19 MiB, 2 iterations). Verification
 * against a missing account still spends the time of a real verification, so response
 * times do not reveal which e-mail addresses have accounts.
 */
import argon2 from "argon2";

const options = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

let dummyHash: Promise<string> | undefined;

/** Hashes a password for storage. */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, options);
}

/** Checks `password` against `hash` (or against nothing, in constant-ish time, when `hash` is null). */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= argon2.hash("no account has this password", options);
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** Whether a stored hash uses weaker parameters than today's and should be replaced at next login. */
export function needsRehash(hash: string): boolean {
  return argon2.needsRehash(hash, options);
}
