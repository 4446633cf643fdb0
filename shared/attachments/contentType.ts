/**
 * The content type of an uploaded file, taken from its first bytes where they are
 * recognisable; what the client claims is ignored. Text that is valid UTF-8 is
 * `text/plain` (never HTML: attachments are downloads, not pages); anything else is
 * `application/octet-stream`.
 */

interface Signature {
  type: string;
  offset?: number;
  bytes: number[];
}

const SIGNATURES: Signature[] = [
  { type: "image/png", bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: "image/jpeg", bytes: [0xff, 0xd8, 0xff] },
  { type: "image/gif", bytes: [0x47, 0x49, 0x46, 0x38] },
  { type: "application/pdf", bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] },
  { type: "application/zip", bytes: [0x50, 0x4b, 0x03, 0x04] },
  { type: "application/gzip", bytes: [0x1f, 0x8b] },
  { type: "application/x-7z-compressed", bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
  { type: "image/bmp", bytes: [0x42, 0x4d] },
];

const matches = (head: Buffer, { offset = 0, bytes }: Signature) => head.length >= offset + bytes.length && bytes.every((b, i) => head[offset + i] === b);

/** The type of a file whose first bytes (up to 4 KB is plenty) are `head`. */
export function sniffContentType(head: Buffer): string {
  for (const signature of SIGNATURES) if (matches(head, signature)) return signature.type;
  // RIFF....WEBP
  if (head.length >= 12 && head.toString("latin1", 0, 4) === "RIFF" && head.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  if (head.length === 0) return "application/octet-stream";
  if (!head.includes(0) && isUtf8Prefix(head)) return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

/** Whether `head` is UTF-8, allowing a multi-byte character cut off at its end. */
function isUtf8Prefix(head: Buffer): boolean {
  for (let cut = 0; cut < 4 && cut < head.length; cut++) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // try without the last bytes
    }
  }
  return false;
}
