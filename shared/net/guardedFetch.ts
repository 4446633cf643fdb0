/**
 * `fetch` for targets users configure (webhook URLs, git hosting APIs): Node's own fetch
 * with a guarded dispatcher, so every connection, redirects included, is checked by the
 * network guard when it is opened.
 */
import { GuardedDispatcher, type GuardedDispatcherOptions } from "./guardedDispatcher.ts";
import type { NetworkPolicy } from "./networkGuard.ts";

/** A fetch function plus the dispatcher behind it (to hand to SDKs that take one, and to close). */
export interface GuardedFetch {
  fetch: typeof fetch;
  dispatcher: GuardedDispatcher;
  /** Closes the dispatcher's idle keep-alive sockets. */
  close(): Promise<void>;
}

/** Builds a fetch that refuses what `policy` refuses, at connection time. */
export function createGuardedFetch(policy: NetworkPolicy, options: GuardedDispatcherOptions = {}): GuardedFetch {
  const dispatcher = new GuardedDispatcher(policy, options);
  const guarded = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    fetch(input, { ...init, dispatcher: dispatcher as unknown as RequestInit["dispatcher"] })) as typeof fetch;
  return { fetch: guarded, dispatcher, close: () => dispatcher.close() };
}
