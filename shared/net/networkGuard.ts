/**
 * The SSRF guard: every outbound target the service connects to on a user's behalf
 * (deployment hosts, self-hosted git URLs, webhook URLs) goes through `assertPublicHost`
 * before use, and through the guarded lookup (guardedLookup.ts) or the guarded dispatcher
 * (guardedDispatcher.ts) when the connection is opened, so a DNS answer that changes between
 * the check and the connection cannot reach a private address (DNS rebinding).
 *
 * Private targets (loopback, RFC 1918, ULA, link-local, CGNAT, …) are refused unless
 * `ALLOW_PRIVATE_NETWORK_TARGETS` is true; metadata endpoints are refused always.
 */
import { lookup } from "node:dns/promises";
import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";
import { classifyParsed, describeEmbedded, isLocalhostName, isMetadataHostname, type BlockedClass } from "./addressClass.ts";
import { parseIpLiteral, parseLegacyIPv4 } from "./ipAddress.ts";

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (tests inject one to simulate DNS answers). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** What the guard allows, built from the configuration with `networkPolicy`. */
export interface NetworkPolicy {
  /** `ALLOW_PRIVATE_NETWORK_TARGETS`: allow loopback and private targets (never metadata). */
  allowPrivate: boolean;
  /** DNS resolution; the system resolver (`dns.lookup`, all addresses) when absent. */
  resolver?: Resolver;
}

/** The guard's policy from the service configuration. */
export function networkPolicy(config: Pick<Config, "allowPrivateNetworkTargets">): NetworkPolicy {
  return { allowPrivate: config.allowPrivateNetworkTargets };
}

const CLASS_NAMES: Record<BlockedClass, string> = {
  loopback: "a loopback address",
  private: "a private network address",
  link_local: "a link-local address",
  cgnat: "a carrier-grade NAT address",
  multicast: "a multicast address",
  unspecified: "an unspecified address",
  reserved: "a reserved address",
  metadata: "a cloud metadata address",
};

/**
 * 422 `network_target_refused`: the target resolves to an address the service must not reach.
 * The message names the address only when the caller wrote it (a literal, in any notation);
 * for a name it gives the class alone, since what an internal name resolves to is the
 * network's to know, not the caller's (the message reaches API answers and deployment logs).
 * `address` keeps it for the service's own use.
 */
export class NetworkTargetError extends AppError {
  readonly host: string;
  readonly address: string;
  readonly blockedClass: BlockedClass;
  constructor(host: string, address: string, blockedClass: BlockedClass, resolved = false) {
    const shown = resolved ? `${host}: it resolves to` : host === address ? `${address}:` : `${host} (${address}):`;
    const hint =
      blockedClass === "metadata"
        ? "Metadata endpoints are never allowed."
        : "Set ALLOW_PRIVATE_NETWORK_TARGETS=true to allow private network targets.";
    super(422, "network_target_refused", `Refused to connect to ${shown} ${CLASS_NAMES[blockedClass]}. ${hint}`);
    this.name = "NetworkTargetError";
    this.host = host;
    this.address = address;
    this.blockedClass = blockedClass;
  }
}

/** 422 `host_not_found`: the host name has no address (or the target is not a host at all). */
export class HostLookupError extends AppError {
  readonly host: string;
  constructor(host: string, reason: string) {
    super(422, "host_not_found", `Cannot resolve ${host || "the host"}: ${reason}.`);
    this.name = "HostLookupError";
    this.host = host;
  }
}

/**
 * The host name of a URL, a `host:port` pair, a bracketed IPv6 or a bare host: lower-cased,
 * brackets and a trailing dot removed.
 * @throws HostLookupError when nothing host-like is given.
 */
export function hostOf(hostOrUrl: string): string {
  const text = hostOrUrl.trim();
  let host: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    if (!URL.canParse(text)) throw new HostLookupError(text, "not a valid URL");
    host = new URL(text).hostname;
  } else if (text.startsWith("[")) {
    host = text.slice(0, text.indexOf("]") + 1);
  } else {
    host = text.split(":").length === 2 ? text.split(":")[0]! : text;
  }
  host = host.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (!host || /[\s/@?#\\]/.test(host)) throw new HostLookupError(text, "not a host name");
  return host;
}

/**
 * Refuses the address when the policy does not allow it; `resolved` when DNS gave it for
 * `host` (the refusal then does not name it).
 * @throws NetworkTargetError
 */
export function checkAddress(host: string, address: string, policy: NetworkPolicy, resolved = false): void {
  const parsed = parseIpLiteral(address);
  if (!parsed) throw new HostLookupError(host, resolved ? "resolved to something that is not an address" : `not an address (${address})`);
  const blocked = classifyParsed(parsed);
  if (!blocked) return;
  if (blocked === "metadata" || !policy.allowPrivate) {
    const inner = describeEmbedded(address);
    throw new NetworkTargetError(host, inner ? `${address}, which carries ${inner}` : address, blocked, resolved);
  }
}

const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** The literal address a host denotes by itself (IPv4 in any inet_aton notation, IPv6), or null. */
export function literalAddress(hostname: string): ResolvedAddress | null {
  const literal = parseIpLiteral(hostname);
  if (literal) return { address: hostname.replace(/^\[|\]$/g, "").split("%")[0]!, family: literal.family };
  const legacy = parseLegacyIPv4(hostname);
  return legacy ? { address: legacy, family: 4 } : null;
}

/**
 * Resolves `hostOrUrl` and checks every address it resolves to; any refused address refuses
 * the host (an attacker-controlled zone could mix a public and a private answer).
 * @returns the checked addresses, to connect to one of them directly.
 * @throws NetworkTargetError for a refused address, HostLookupError when the name has none.
 */
export async function assertPublicHost(hostOrUrl: string, policy: NetworkPolicy): Promise<ResolvedAddress[]> {
  const hostname = hostOf(hostOrUrl);
  if (isMetadataHostname(hostname)) throw new NetworkTargetError(hostname, hostname, "metadata");
  const literal = literalAddress(hostname);
  if (literal) {
    checkAddress(hostname, literal.address, policy);
    return [literal];
  }
  if (isLocalhostName(hostname) && !policy.allowPrivate) throw new NetworkTargetError(hostname, hostname, "loopback");
  let addresses: ResolvedAddress[];
  try {
    addresses = await (policy.resolver ?? systemResolver)(hostname);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new HostLookupError(hostname, code === "ENOTFOUND" || code === "ENODATA" ? "no such host" : `DNS lookup failed (${code ?? "error"})`);
  }
  if (addresses.length === 0) throw new HostLookupError(hostname, "no such host");
  for (const { address } of addresses) checkAddress(hostname, address, policy, true);
  return addresses;
}

/**
 * Resolves and checks a host, then picks the address to connect to (IPv4 first, as most
 * FTP and SSH hosts are reached that way). Connecting to this address, not to the name,
 * pins the connection to what was checked.
 * @throws NetworkTargetError, HostLookupError
 */
export async function resolvePublicAddress(hostOrUrl: string, policy: NetworkPolicy): Promise<ResolvedAddress> {
  const addresses = await assertPublicHost(hostOrUrl, policy);
  return addresses.find((a) => a.family === 4) ?? addresses[0]!;
}
