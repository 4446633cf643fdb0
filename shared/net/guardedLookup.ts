/**
 * A `lookup` for net, tls, http and https sockets that resolves through the network guard,
 * so the addresses checked are the addresses connected to: a name that answered with a
 * public address when the target was validated and answers with a private one later is
 * refused when the socket connects (DNS rebinding).
 *
 * Node skips `lookup` for IP literals; callers that accept literals check them first with
 * `assertPublicHost` (the guarded dispatcher does).
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import { assertPublicHost, HostLookupError, type NetworkPolicy } from "./networkGuard.ts";

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Builds the `lookup` socket option that refuses what `policy` refuses. */
export function createGuardedLookup(policy: NetworkPolicy): LookupFunction {
  const guarded = (hostname: string, options: LookupOptions | number, callback: LookupCallback): void => {
    const opts: LookupOptions = typeof options === "number" ? { family: options } : options;
    const family = opts.family === "IPv4" ? 4 : opts.family === "IPv6" ? 6 : Number(opts.family ?? 0);
    assertPublicHost(hostname, policy).then(
      (addresses) => {
        const usable = addresses.filter((a) => family === 0 || a.family === family);
        const first = usable[0];
        if (!first) {
          callback(new HostLookupError(hostname, `no IPv${family} address`), "", 0);
        } else if (opts.all) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
  return guarded;
}
