/**
 * Development defaults kept in the data folder (`.data/` by default): secrets that must
 * stay stable across restarts (APP_KEY, realtime credentials, the first-party OAuth client)
 * are generated on first start into `<DATA_DIR>/secrets.json` and reused. Production
 * (NODE_ENV=production) never generates: missing secrets are a configuration error there.
 */
import { createECDH, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/** The first-party OAuth client's id when it is generated. */
export const GENERATED_CLIENT_ID = "first-party";

/**
 * Generated values, in groups that are filled together or not at all: the OAuth client id
 * and secret belong together, so one given without the other is left for the
 * configuration check to refuse rather than completed with a value that does not match.
 */
const groups: Record<string, () => string>[] = [
  { APP_KEY: () => `base64:${randomBytes(32).toString("base64")}` },
  { REALTIME_APP_KEY: () => randomBytes(10).toString("hex") },
  { REALTIME_APP_SECRET: () => randomBytes(24).toString("hex") },
  { OAUTH_CLIENT_ID: () => GENERATED_CLIENT_ID, OAUTH_CLIENT_SECRET: () => randomBytes(32).toString("base64url") },
  vapidGroup(),
];

/** A VAPID key pair (P-256, base64url as web-push takes them), made once for both names. */
function vapidGroup(): Record<string, () => string> {
  let pair: { publicKey: string; privateKey: string } | undefined;
  const make = () => {
    if (pair) return pair;
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const key = ecdh.getPrivateKey();
    const privateKey = Buffer.concat([Buffer.alloc(32 - key.length), key]).toString("base64url");
    return (pair = { publicKey: ecdh.getPublicKey().toString("base64url"), privateKey });
  };
  return { VAPID_PUBLIC_KEY: () => make().publicKey, VAPID_PRIVATE_KEY: () => make().privateKey };
}

export interface DevelopmentDefaultsOptions {
  /** Told once about values generated now (their names, and the first-party client's credentials). */
  announce?: (line: string) => void;
}

/** Returns `env` with missing development secrets filled from (or generated into) `<DATA_DIR>/secrets.json`. */
export async function withDevelopmentDefaults(
  env: Record<string, string | undefined>,
  options: DevelopmentDefaultsOptions = {},
): Promise<Record<string, string | undefined>> {
  if (env.NODE_ENV === "production") return env;
  const generated: Record<string, () => string> = Object.assign(
    {},
    ...groups.filter((group) => Object.keys(group).every((name) => !env[name])),
  );
  const missing = Object.keys(generated);
  if (missing.length === 0) return env;
  const dataDir = env.DATA_DIR || ".data";
  const file = path.join(dataDir, "secrets.json");
  const stored = existsSync(file) ? (JSON.parse(await readFile(file, "utf8")) as Record<string, string>) : {};
  const created = missing.filter((name) => !stored[name]);
  for (const name of created) stored[name] = generated[name]!();
  if (created.length) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    options.announce?.(`Generated ${created.join(", ")} into ${file} (development only; reused on later starts).`);
    if (created.includes("OAUTH_CLIENT_SECRET")) {
      options.announce?.(`First-party OAuth client: client_id=${stored.OAUTH_CLIENT_ID} client_secret=${stored.OAUTH_CLIENT_SECRET} (kept in ${file}).`);
    }
  }
  return { ...Object.fromEntries(missing.map((name) => [name, stored[name]])), ...Object.fromEntries(Object.entries(env).filter(([, v]) => v)) };
}
