/**
 * DNS answers for tests of the network guard: a fixed table, and a name that answers with a
 * public address first and a private one afterwards (DNS rebinding).
 */
import type { Resolver } from "../../../shared/net/networkGuard.ts";

/** A public address that tests never connect to (the guard checks it, nothing dials it). */
export const PUBLIC_ADDRESS = "93.184.216.34";

/** Answers from a table; unknown names fail as the system resolver fails. */
export function tableResolver(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

/** Answers `PUBLIC_ADDRESS` on the first lookup and `privateAddress` on every later one. */
export function rebindingResolver(privateAddress: string): Resolver & { calls: number } {
  const resolver = Object.assign(
    async () => {
      resolver.calls += 1;
      return [{ address: resolver.calls === 1 ? PUBLIC_ADDRESS : privateAddress, family: 4 as const }];
    },
    { calls: 0 },
  );
  return resolver;
}
