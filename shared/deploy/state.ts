/**
 * Deployment state helpers: an in-memory store for runs without persistence (connection
 * tests, the upload form) and for tests.
 */
import type { DeployState } from "./types.ts";

/** A DeployState kept in a Map; `entries` exposes it for inspection. */
export function memoryState(initial: Record<string, string> = {}): DeployState & { entries: Map<string, string> } {
  const entries = new Map(Object.entries(initial));
  return {
    entries,
    async get(key) {
      return entries.get(key);
    },
    async set(key, value) {
      entries.set(key, value);
    },
  };
}
