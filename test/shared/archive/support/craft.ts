/**
 * Builds hostile ZIP archives byte by byte for the reader's tests: names our writer (and
 * yazl) refuse to write, symlink and device modes, lying sizes and CRCs, encryption flags,
 * unknown methods, and entries sharing their data. Uses the writer's own record layouts and
 * patches the fields a well-behaved writer never sets.
 */
import zlib from "node:zlib";
import { centralHeader, endRecords, flagUtf8, localHeader, methodDeflate, methodStore, type EntryRecord } from "../../../../shared/archive/zipFormat.ts";

/** One crafted entry; everything but `name` and `data` defaults to an honest value. */
export interface CraftEntry {
  name: string | Buffer;
  data: Buffer | string;
  deflate?: boolean;
  /** Unix mode with file type bits (e.g. 0o120777 for a symlink). */
  unixMode?: number;
  /** Uncompressed size to declare instead of the real one. */
  declaredSize?: number;
  crc?: number;
  flags?: number;
  method?: number;
  /** Stored bytes to write instead of `data` (deflated when `deflate`), e.g. a broken deflate stream. */
  body?: Buffer;
  /** Point the central entry at the local header of entry `sharesWith` (overlapping data). */
  sharesWith?: number;
}

/** The archive bytes. */
export function craftZip(entries: CraftEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const offsets: number[] = [];
  let offset = 0;
  for (const e of entries) {
    const raw = Buffer.from(e.data);
    const body = e.body ?? (e.deflate ? zlib.deflateRawSync(raw) : raw);
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name);
    const record: EntryRecord = {
      name,
      nameLength: name.length,
      method: e.method ?? (e.deflate ? methodDeflate : methodStore),
      flags: e.flags ?? flagUtf8,
      dos: { date: (44 << 9) | (1 << 5) | 1, time: 0 },
      unixSeconds: null,
      crc: e.crc ?? zlib.crc32(raw),
      compressedSize: body.length,
      size: e.declaredSize ?? raw.length,
      offset,
      mode: 0o644,
      zip64Local: false,
    };
    if (e.sharesWith !== undefined) {
      record.offset = offsets[e.sharesWith]!;
      offsets.push(record.offset);
    } else {
      offsets.push(offset);
      const header = localHeader(record);
      parts.push(header, body);
      offset += header.length + body.length;
    }
    const entry = centralHeader(record, false);
    if (e.unixMode !== undefined) entry.writeUInt32LE((e.unixMode << 16) >>> 0, 38);
    central.push(entry);
  }
  const directory = Buffer.concat(central);
  return Buffer.concat([...parts, directory, endRecords(entries.length, offset, directory.length, false)]);
}
