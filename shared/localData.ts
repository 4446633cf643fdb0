/**
 * Development defaults kept in the data folder (`.data/` by default): secrets that must
 * stay stable across restarts (APP_KEY, realtime credentials) are generated on first start
 * and reused. Production (NODE_ENV=production) never generates: missing secrets are a
 * configuration error there.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const generated: Record<string, () => string> = {
  APP_KEY: () => `base64:${randomBytes(32).toString("base64")}`,
  REALTIME_APP_KEY: () => randomBytes(10).toString("hex"),
  REALTIME_APP_SECRET: () => randomBytes(24).toString("hex"),
};

/** Returns `env` with missing development secrets filled from (or generated into) `<DATA_DIR>/secrets.json`. */
export async function withDevelopmentDefaults(env: Record<string, string | undefined>): Promise<Record<string, string | undefined>> {
  if (env.NODE_ENV === "production") return env;
  const missing = Object.keys(generated).filter((name) => !env[name]);
  if (missing.length === 0) return env;
  const dataDir = env.DATA_DIR || ".data";
  const file = path.join(dataDir, "secrets.json");
  const stored = existsSync(file) ? (JSON.parse(await readFile(file, "utf8")) as Record<string, string>) : {};
  let changed = false;
  for (const name of missing) {
    if (!stored[name]) {
      stored[name] = generated[name]!();
      changed = true;
    }
  }
  if (changed) {
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  return { ...Object.fromEntries(missing.map((name) => [name, stored[name]])), ...Object.fromEntries(Object.entries(env).filter(([, v]) => v)) };
}
