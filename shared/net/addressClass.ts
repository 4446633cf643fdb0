/**
 * Which addresses an outbound connection of the service may reach.
 *
 * Glossary:
 * - blocked class: why an address is not a public internet host (`loopback`, `private`,
 *   `link_local`, `cgnat`, `multicast`, `unspecified`, `reserved`, `metadata`).
 * - metadata: cloud instance-metadata endpoints; refused even when private targets are
 *   allowed, because no deployment or webhook ever has a reason to reach them and they hand
 *   out the machine's cloud credentials.
 * - embedded IPv4: IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`,
 *   compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`); they are judged by the
 *   IPv4 address inside, so `::ffff:127.0.0.1` is loopback.
 */
import { formatIPv4, parseIpLiteral, type ParsedAddress } from "./ipAddress.ts";

/** Why an address is refused; null-free union so messages can name the class. */
export type BlockedClass = "loopback" | "private" | "link_local" | "cgnat" | "multicast" | "unspecified" | "reserved" | "metadata";

interface Range {
  /** Network address bytes. */
  net: number[];
  bits: number;
  class: BlockedClass;
}

const v4 = (text: string, bits: number, cls: BlockedClass): Range => ({ net: text.split(".").map(Number), bits, class: cls });

// Most specific ranges first: the first match names the class.
const IPV4_RANGES: Range[] = [
  v4("169.254.169.254", 32, "metadata"), // AWS, GCP, Azure, OpenStack, DigitalOcean
  v4("169.254.170.2", 32, "metadata"), // AWS ECS task metadata
  v4("169.254.169.253", 32, "metadata"), // AWS VPC DNS
  v4("100.100.100.200", 32, "metadata"), // Alibaba Cloud
  v4("192.0.0.192", 32, "metadata"), // Oracle Cloud
  v4("0.0.0.0", 8, "unspecified"),
  v4("10.0.0.0", 8, "private"),
  v4("100.64.0.0", 10, "cgnat"),
  v4("127.0.0.0", 8, "loopback"),
  v4("169.254.0.0", 16, "link_local"),
  v4("172.16.0.0", 12, "private"),
  v4("192.0.0.0", 24, "reserved"),
  v4("192.0.2.0", 24, "reserved"),
  v4("192.88.99.0", 24, "reserved"),
  v4("192.168.0.0", 16, "private"),
  v4("198.18.0.0", 15, "reserved"),
  v4("198.51.100.0", 24, "reserved"),
  v4("203.0.113.0", 24, "reserved"),
  v4("224.0.0.0", 4, "multicast"),
  v4("240.0.0.0", 4, "reserved"),
];

const v6 = (groups: number[], bits: number, cls: BlockedClass): Range => ({
  net: groups.flatMap((g) => [g >> 8, g & 0xff]).concat(new Array<number>(16 - groups.length * 2).fill(0)),
  bits,
  class: cls,
});

const IPV6_RANGES: Range[] = [
  v6([0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254], 128, "metadata"), // AWS IMDS over IPv6
  v6([0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0023], 128, "metadata"), // AWS Time Sync / DNS over IPv6
  v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"),
  v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"),
  v6([0, 0, 0, 0, 0, 0], 96, "reserved"), // the rest of the deprecated IPv4-compatible block
  v6([0x0064, 0xff9b, 0x0001], 48, "private"), // local-use NAT64
  v6([0x0100], 64, "reserved"), // discard prefix
  v6([0x2001, 0x0000], 32, "reserved"), // Teredo: the client address inside is obfuscated
  v6([0x2001, 0x0db8], 32, "reserved"), // documentation
  v6([0xfc00], 7, "private"), // unique local
  v6([0xfe80], 10, "link_local"),
  v6([0xfec0], 10, "private"), // deprecated site-local
  v6([0xff00], 8, "multicast"),
];

function inRange(bytes: Uint8Array, range: Range): boolean {
  let bits = range.bits;
  for (let i = 0; bits > 0; i += 1, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.net[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), or null. */
export function embeddedIPv4(bytes: Uint8Array): Uint8Array | null {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.subarray(12, 16); // ::ffff:a.b.c.d
  if (zeros(0, 12) && !zeros(12, 15)) return bytes.subarray(12, 16); // ::a.b.c.d (not :: or ::1)
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return bytes.subarray(12, 16);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.subarray(2, 6); // 6to4
  return null;
}

/** Classifies a parsed address: null for a public address, else the class that blocks it. */
export function classifyParsed(address: ParsedAddress): BlockedClass | null {
  if (address.family === 4) return IPV4_RANGES.find((r) => inRange(address.bytes, r))?.class ?? null;
  const inner = embeddedIPv4(address.bytes);
  if (inner) return classifyParsed({ family: 4, bytes: inner });
  return IPV6_RANGES.find((r) => inRange(address.bytes, r))?.class ?? null;
}

/**
 * Classifies an IP literal (IPv4 dotted quad or IPv6): null when it is a public address.
 * @throws TypeError when `address` is not an IP literal.
 */
export function classifyAddress(address: string): BlockedClass | null {
  const parsed = parseIpLiteral(address);
  if (!parsed) throw new TypeError(`not an IP address: ${address}`);
  return classifyParsed(parsed);
}

/** The IPv4 address an IPv6 literal hides, as a dotted quad (for messages), or null. */
export function describeEmbedded(address: string): string | null {
  const parsed = parseIpLiteral(address);
  if (!parsed || parsed.family === 4) return null;
  const inner = embeddedIPv4(parsed.bytes);
  return inner ? formatIPv4(inner) : null;
}

/** Host names that reach instance metadata without looking like it in DNS. */
const METADATA_HOSTNAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.com",
  "metadata.platformequinix.com",
]);

/** Whether a (lower-cased, dot-trimmed) host name is a known metadata service name. */
export function isMetadataHostname(hostname: string): boolean {
  return METADATA_HOSTNAMES.has(hostname);
}

/** Whether a host name is `localhost` or under `.localhost`, which RFC 6761 reserves for loopback. */
export function isLocalhostName(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost");
}
