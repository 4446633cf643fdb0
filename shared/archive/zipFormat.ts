/**
 * Byte layouts of the ZIP records the writer emits (APPNOTE 6.3.10): local file header, data
 * descriptor, central directory header, and the end records, with ZIP64 variants.
 *
 * Glossary: "local header" precedes each entry's data; "data descriptor" follows the data when
 * its CRC and sizes were unknown while the header was written (flag bit 3); the "central
 * directory" at the end lists every entry again with its offset; ZIP64 records carry 64-bit
 * sizes, offsets and counts when the 16/32-bit fields overflow ("mark" = the all-ones value
 * left in the narrow field).
 */
import type { DosDateTime } from "./dosTime.ts";

/** Flag bit 3: CRC and sizes follow the data in a data descriptor. */
export const flagDataDescriptor = 0x0008;
/** Flag bit 11: the name is UTF-8. */
export const flagUtf8 = 0x0800;
/** Compression methods. */
export const methodStore = 0;
export const methodDeflate = 8;

const mark32 = 0xffffffff;
const mark16 = 0xffff;
const versionDefault = 20; // 2.0: deflate, folders
const versionZip64 = 45; // 4.5: ZIP64
const madeByUnix = 3 << 8; // high byte 3: external attributes hold a Unix mode
const utExtraLength = 9; // "UT" extra: id, size, flags, mtime

/** What the writer knows about one entry; everything the central directory repeats. */
export interface EntryRecord {
  /**
   * The normalised path: a string (written as UTF-8; the writer keeps the one its path set
   * already holds rather than a Buffer per entry), or its bytes as they are.
   */
  name: string | Buffer;
  /** The name's length in bytes (a string's UTF-8 length), measured once when the record is made: both headers write it. */
  nameLength: number;
  method: number;
  flags: number;
  dos: DosDateTime;
  /** Exact modification time for the "UT" extra field, or null to omit it. */
  unixSeconds: number | null;
  crc: number;
  compressedSize: number;
  size: number;
  /** Offset of the local header from the start of the archive. */
  offset: number;
  /** Unix permission bits (the file type is always "regular file"). */
  mode: number;
  /** The local header carries a ZIP64 extra, so the data descriptor has 64-bit sizes. */
  zip64Local: boolean;
}

/** Writes the entry's name at `at`. */
function writeName(buf: Buffer, e: EntryRecord, at: number): void {
  if (typeof e.name === "string") buf.write(e.name, at);
  else e.name.copy(buf, at);
}

function writeUInt64(buf: Buffer, value: number, at: number): void {
  buf.writeUInt32LE(value % 0x100000000, at);
  buf.writeUInt32LE(Math.floor(value / 0x100000000), at + 4);
}

function writeUtExtra(buf: Buffer, at: number, seconds: number): void {
  buf.writeUInt16LE(0x5455, at);
  buf.writeUInt16LE(5, at + 2);
  buf[at + 4] = 1; // bit 0: modification time present
  buf.writeUInt32LE(seconds, at + 5);
}

/** The local file header of an entry, name and extra fields included. */
export function localHeader(e: EntryRecord): Buffer {
  const ut = e.unixSeconds === null ? 0 : utExtraLength;
  const zip64 = e.zip64Local ? 20 : 0;
  const name = e.nameLength;
  const buf = Buffer.allocUnsafe(30 + name + ut + zip64);
  const deferred = (e.flags & flagDataDescriptor) !== 0;
  buf.writeUInt32LE(0x04034b50, 0);
  buf.writeUInt16LE(e.zip64Local ? versionZip64 : versionDefault, 4);
  buf.writeUInt16LE(e.flags, 6);
  buf.writeUInt16LE(e.method, 8);
  buf.writeUInt16LE(e.dos.time, 10);
  buf.writeUInt16LE(e.dos.date, 12);
  buf.writeUInt32LE(deferred ? 0 : e.crc, 14);
  buf.writeUInt32LE(e.zip64Local ? mark32 : deferred ? 0 : e.compressedSize, 18);
  buf.writeUInt32LE(e.zip64Local ? mark32 : deferred ? 0 : e.size, 22);
  buf.writeUInt16LE(name, 26);
  buf.writeUInt16LE(ut + zip64, 28);
  writeName(buf, e, 30);
  let at = 30 + name;
  if (e.unixSeconds !== null) {
    writeUtExtra(buf, at, e.unixSeconds);
    at += ut;
  }
  if (e.zip64Local) {
    // With a data descriptor the real sizes come after the data; the extra holds zeros.
    buf.writeUInt16LE(0x0001, at);
    buf.writeUInt16LE(16, at + 2);
    writeUInt64(buf, deferred ? 0 : e.size, at + 4);
    writeUInt64(buf, deferred ? 0 : e.compressedSize, at + 12);
  }
  return buf;
}

/** The data descriptor that follows deferred entry data (64-bit sizes with a ZIP64 local header). */
export function dataDescriptor(e: EntryRecord): Buffer {
  const buf = Buffer.allocUnsafe(e.zip64Local ? 24 : 16);
  buf.writeUInt32LE(0x08074b50, 0);
  buf.writeUInt32LE(e.crc, 4);
  if (e.zip64Local) {
    writeUInt64(buf, e.compressedSize, 8);
    writeUInt64(buf, e.size, 16);
  } else {
    buf.writeUInt32LE(e.compressedSize, 8);
    buf.writeUInt32LE(e.size, 12);
  }
  return buf;
}

/**
 * The central directory header of an entry. Fields that overflow 32 bits (all three when
 * `forceZip64`) move to a ZIP64 extra, in the order the format fixes.
 */
export function centralHeader(e: EntryRecord, forceZip64: boolean): Buffer {
  const bigSize = forceZip64 || e.size >= mark32;
  const bigCompressed = forceZip64 || e.compressedSize >= mark32;
  const bigOffset = forceZip64 || e.offset >= mark32;
  const zip64Fields = (bigSize ? 1 : 0) + (bigCompressed ? 1 : 0) + (bigOffset ? 1 : 0);
  const zip64 = zip64Fields ? 4 + 8 * zip64Fields : 0;
  const ut = e.unixSeconds === null ? 0 : utExtraLength;
  const name = e.nameLength;
  const buf = Buffer.allocUnsafe(46 + name + ut + zip64);
  const version = zip64 || e.zip64Local ? versionZip64 : versionDefault;
  buf.writeUInt32LE(0x02014b50, 0);
  buf.writeUInt16LE(madeByUnix | version, 4);
  buf.writeUInt16LE(version, 6);
  buf.writeUInt16LE(e.flags, 8);
  buf.writeUInt16LE(e.method, 10);
  buf.writeUInt16LE(e.dos.time, 12);
  buf.writeUInt16LE(e.dos.date, 14);
  buf.writeUInt32LE(e.crc, 16);
  buf.writeUInt32LE(bigCompressed ? mark32 : e.compressedSize, 20);
  buf.writeUInt32LE(bigSize ? mark32 : e.size, 24);
  buf.writeUInt16LE(name, 28);
  buf.writeUInt16LE(ut + zip64, 30);
  buf.writeUInt16LE(0, 32); // comment length
  buf.writeUInt16LE(0, 34); // disk number start
  buf.writeUInt16LE(0, 36); // internal attributes
  buf.writeUInt32LE(((0o100000 | e.mode) << 16) >>> 0, 38); // regular file + permissions
  buf.writeUInt32LE(bigOffset ? mark32 : e.offset, 42);
  writeName(buf, e, 46);
  let at = 46 + name;
  if (e.unixSeconds !== null) {
    writeUtExtra(buf, at, e.unixSeconds);
    at += ut;
  }
  if (zip64) {
    buf.writeUInt16LE(0x0001, at);
    buf.writeUInt16LE(zip64 - 4, at + 2);
    at += 4;
    for (const [big, value] of [[bigSize, e.size], [bigCompressed, e.compressedSize], [bigOffset, e.offset]] as const) {
      if (!big) continue;
      writeUInt64(buf, value, at);
      at += 8;
    }
  }
  return buf;
}

/**
 * The records after the central directory: ZIP64 end record and locator when a count, size or
 * offset overflows (or `forceZip64`), then the classic end record.
 */
export function endRecords(count: number, directoryOffset: number, directorySize: number, forceZip64: boolean): Buffer {
  const bigCount = forceZip64 || count >= mark16;
  const bigSize = forceZip64 || directorySize >= mark32;
  const bigOffset = forceZip64 || directoryOffset >= mark32;
  const zip64 = bigCount || bigSize || bigOffset;
  const buf = Buffer.alloc((zip64 ? 56 + 20 : 0) + 22);
  let at = 0;
  if (zip64) {
    buf.writeUInt32LE(0x06064b50, 0);
    writeUInt64(buf, 44, 4); // size of the rest of this record
    buf.writeUInt16LE(madeByUnix | versionZip64, 12);
    buf.writeUInt16LE(versionZip64, 14);
    // 16: this disk, 20: directory disk, both 0 (Buffer.alloc)
    writeUInt64(buf, count, 24);
    writeUInt64(buf, count, 32);
    writeUInt64(buf, directorySize, 40);
    writeUInt64(buf, directoryOffset, 48);
    buf.writeUInt32LE(0x07064b50, 56); // locator
    writeUInt64(buf, directoryOffset + directorySize, 64); // where the ZIP64 end record starts
    buf.writeUInt32LE(1, 72); // total disks
    at = 76;
  }
  buf.writeUInt32LE(0x06054b50, at);
  buf.writeUInt16LE(bigCount ? mark16 : count, at + 8);
  buf.writeUInt16LE(bigCount ? mark16 : count, at + 10);
  buf.writeUInt32LE(bigSize ? mark32 : directorySize, at + 12);
  buf.writeUInt32LE(bigOffset ? mark32 : directoryOffset, at + 16);
  return buf;
}
