/**
 * IP address parsing for the network guard: byte forms of IPv4 and IPv6 literals, and the
 * legacy IPv4 notations (`2130706433`, `0x7f.1`, `0177.0.0.1`) that `inet_aton`, and so the
 * system resolver, still accepts, so that a host written that way cannot hide a loopback or
 * private address from the guard.
 */
import { isIPv4, isIPv6 } from "node:net";

/** A parsed address: 4 bytes for IPv4, 16 for IPv6. */
export interface ParsedAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

/** Parses a dotted-quad IPv4 or an IPv6 literal (brackets and a zone id allowed); null otherwise. */
export function parseIpLiteral(text: string): ParsedAddress | null {
  const host = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (isIPv4(host)) return { family: 4, bytes: Uint8Array.from(host.split(".").map(Number)) };
  const withoutZone = host.split("%")[0] ?? host;
  if (isIPv6(withoutZone)) return { family: 6, bytes: ipv6Bytes(withoutZone) };
  return null;
}

/**
 * Reads a host in any IPv4 notation `inet_aton` accepts (1 to 4 parts, each decimal, octal
 * with a leading 0 or hex with 0x; the last part fills the remaining bytes) and returns the
 * dotted quad, or null when the host is not such a number.
 */
export function parseLegacyIPv4(host: string): string | null {
  const parts = host.replace(/\.$/, "").split(".");
  if (parts.length < 1 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    const value = parseNumberPart(part);
    if (value === null) return null;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255)) return null;
  const remainingBytes = 4 - values.length;
  if (last >= 2 ** (8 * remainingBytes)) return null;
  const bytes = [...values];
  for (let i = remainingBytes - 1; i >= 0; i -= 1) bytes.push(Math.floor(last / 2 ** (8 * i)) % 256);
  return bytes.join(".");
}

function parseNumberPart(part: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return Number.parseInt(part.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part);
  return null;
}

/** Expands an IPv6 literal (validated by the caller) into its 16 bytes. */
function ipv6Bytes(text: string): Uint8Array {
  // An embedded dotted quad (::ffff:1.2.3.4) is rewritten as its two hex groups first.
  const hexOnly = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const [left = "", right] = hexOnly.split("::");
  const leftGroups = left ? left.split(":") : [];
  const rightGroups = right ? right.split(":") : [];
  const zeros = right === undefined ? 0 : 8 - leftGroups.length - rightGroups.length;
  const groups = [...leftGroups.map(hex), ...new Array<number>(zeros).fill(0), ...rightGroups.map(hex)];
  const out = new Uint8Array(16);
  groups.forEach((group, i) => {
    out[i * 2] = group >> 8;
    out[i * 2 + 1] = group & 0xff;
  });
  return out;
}

const hex = (group: string) => Number.parseInt(group, 16);

/** Formats 4 bytes as a dotted quad. */
export function formatIPv4(bytes: Uint8Array): string {
  return Array.from(bytes.subarray(0, 4)).join(".");
}
