/**
 * The global settings as each process reads them: loaded once, kept until a NOTIFY on
 * `settings:changed` (any writer's change, through the table's trigger) or `cache:clear`
 * (POST /admin/cache/clear) says otherwise. After the LISTEN connection reconnects the
 * cache is dropped too, since notifications sent meanwhile are lost; and an entry older
 * than `maxAgeMs` is re-read anyway, as a last guard.
 */
import type { DatabasePool } from "../db/pool.ts";
import { findGlobalSettings, type GlobalSettingsRow } from "./store.ts";

export const SETTINGS_CHANGED_CHANNEL = "settings:changed";
export const CACHE_CLEAR_CHANNEL = "cache:clear";

/** How a cache hears NOTIFYs: a channel subscription and a reconnect callback (the process's one listener). */
export interface NotifySource {
  listen(channel: string, handler: (payload: string) => void): () => void;
  onReconnect(handler: () => void): () => void;
}

export class SettingsCache {
  readonly #pool: DatabasePool;
  readonly #maxAgeMs: number;
  #value: { row: GlobalSettingsRow; at: number } | undefined;
  #loading: Promise<GlobalSettingsRow> | undefined;
  /** Bumped by every invalidation, so a read that started before one does not store its stale row. */
  #generation = 0;
  readonly #detach: (() => void)[] = [];

  constructor(pool: DatabasePool, maxAgeMs = 60_000) {
    this.#pool = pool;
    this.#maxAgeMs = maxAgeMs;
  }

  /** Invalidates on every NOTIFY of `settings:changed` and `cache:clear`, and after reconnects. */
  attach(source: NotifySource): void {
    const drop = () => this.invalidate();
    this.#detach.push(source.listen(SETTINGS_CHANGED_CHANNEL, drop), source.listen(CACHE_CLEAR_CHANNEL, drop), source.onReconnect(drop));
  }

  detach(): void {
    for (const undo of this.#detach.splice(0)) undo();
  }

  /** The current settings (from the cache when it holds them). */
  get(): Promise<GlobalSettingsRow> {
    return Promise.resolve(this.cached() ?? (this.#loading ??= this.#load()));
  }

  /** The settings when the cache holds them fresh, else undefined (for hot paths that skip a promise). */
  cached(): GlobalSettingsRow | undefined {
    const cached = this.#value;
    return cached && Date.now() - cached.at < this.#maxAgeMs ? cached.row : undefined;
  }

  /** Forgets the cached settings; the next `get` reads them again. */
  invalidate(): void {
    this.#generation += 1;
    this.#value = undefined;
    this.#loading = undefined;
  }

  async #load(): Promise<GlobalSettingsRow> {
    const generation = this.#generation;
    try {
      const row = await findGlobalSettings(this.#pool);
      if (generation === this.#generation) this.#value = { row, at: Date.now() };
      return row;
    } finally {
      if (generation === this.#generation) this.#loading = undefined;
    }
  }
}
