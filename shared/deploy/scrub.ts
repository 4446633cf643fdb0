/**
 * Credential scrubbing for everything a deployer lets out: log messages, log metadata and
 * error messages. Servers and SDKs echo more than one expects (a URL with user info, an
 * Authorization header inside an error, a password quoted back in a 530 reply), so every
 * text is passed through the scrubber of the run's config before it leaves the deployer.
 */

const REDACTED = "[redacted]";

/** Config fields that hold credentials, in every deployment config. */
const SECRET_FIELDS = ["password", "private_key", "access_token", "app_password", "passphrase"] as const;

// Generic shapes of credentials, whatever the config: user info in URLs and auth headers.
const PATTERNS: Array<[RegExp, string]> = [
  [/(\/\/)[^/\s@]*:[^/\s@]*@/g, `$1${REDACTED}@`],
  [/\b(authorization|private-token|x-api-key)(["']?\s*[:=]\s*["']?)[^"',\s}]+(\s+[^"',\s}]+)?/gi, `$1$2${REDACTED}`],
  [/\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
];

/** Removes known secrets and credential-shaped substrings from texts and values. */
export class Scrubber {
  readonly #secrets: string[];

  constructor(secrets: Iterable<string | null | undefined>) {
    const unique = new Set<string>();
    for (const secret of secrets) {
      // Very short values would garble every message and protect little; they are still
      // covered by the generic patterns when they appear in URLs or headers.
      if (secret && secret.length >= 4) unique.add(secret);
    }
    // Longest first, so a secret containing another is removed whole.
    this.#secrets = [...unique].sort((a, b) => b.length - a.length);
  }

  /** The text with every secret and credential-shaped substring replaced. */
  text(value: string): string {
    let out = value;
    for (const secret of this.#secrets) out = out.split(secret).join(REDACTED);
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
    return out;
  }

  /** A deep copy of a JSON-like value with every string scrubbed. */
  value<T>(input: T): T {
    return scrubValue(input, this, 0) as T;
  }
}

function scrubValue(input: unknown, scrubber: Scrubber, depth: number): unknown {
  if (typeof input === "string") return scrubber.text(input);
  if (depth > 8 || input === null || typeof input !== "object") return input;
  if (Array.isArray(input)) return input.map((item) => scrubValue(item, scrubber, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    out[key] = (SECRET_FIELDS as readonly string[]).includes(key) ? REDACTED : scrubValue(value, scrubber, depth + 1);
  }
  return out;
}

/**
 * The secrets of a deployment config and the forms they travel in: as given, URL-encoded,
 * as HTTP Basic credentials with the username, and each long line of a private key.
 */
export function secretsOf(config: Record<string, unknown>): string[] {
  const out: string[] = [];
  const username = typeof config.username === "string" ? config.username : "";
  for (const field of SECRET_FIELDS) {
    const value = config[field];
    if (typeof value !== "string" || value === "") continue;
    out.push(value, encodeURIComponent(value), Buffer.from(value).toString("base64"));
    if (username) out.push(Buffer.from(`${username}:${value}`).toString("base64"));
    if (field === "private_key") out.push(...value.split(/\r?\n/).filter((line) => line.length >= 16));
  }
  return out;
}

/** The scrubber for a deployment config. */
export function scrubberFor(config: Record<string, unknown>): Scrubber {
  return new Scrubber(secretsOf(config));
}
