import t from "tap";
import { centralHeader, dataDescriptor, endRecords, flagDataDescriptor, flagUtf8, localHeader, type EntryRecord } from "../../../shared/archive/zipFormat.ts";

// Archives past 4 GiB take minutes to write; the ZIP64 layouts they need are checked here field
// by field instead (the writer's tests cover ZIP64 end to end with forced records and with
// more than 65,535 entries).

const record = (over: Partial<EntryRecord> = {}): EntryRecord => ({
  name: Buffer.from("a.txt"),
  nameLength: 5,
  method: 8,
  flags: flagUtf8,
  dos: { date: 0x5821, time: 0x3800 },
  unixSeconds: 1_700_000_000,
  crc: 0x12345678,
  compressedSize: 10,
  size: 20,
  offset: 0,
  mode: 0o644,
  zip64Local: false,
  ...over,
});

const u64 = (buf: Buffer, at: number) => buf.readUInt32LE(at) + buf.readUInt32LE(at + 4) * 0x100000000;

/** Extra fields of a header as id → data. */
function extras(buf: Buffer, start: number, length: number): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (let at = start; at < start + length; ) {
    const size = buf.readUInt16LE(at + 2);
    out.set(buf.readUInt16LE(at), buf.subarray(at + 4, at + 4 + size));
    at += 4 + size;
  }
  return out;
}

t.test("a plain central header keeps 32-bit fields and the UT time", async (t) => {
  const buf = centralHeader(record(), false);
  t.equal(buf.readUInt32LE(0), 0x02014b50);
  t.equal(buf.readUInt16LE(4), (3 << 8) | 20, "made by Unix, version 2.0");
  t.equal(buf.readUInt32LE(20), 10);
  t.equal(buf.readUInt32LE(24), 20);
  t.equal(buf.readUInt32LE(38) >>> 16, 0o100644, "regular file, rw-r--r--");
  const fields = extras(buf, 46 + 5, buf.readUInt16LE(30));
  t.same([...fields.keys()], [0x5455]);
  t.equal(fields.get(0x5455)!.readUInt32LE(1), 1_700_000_000);
});

t.test("sizes and offsets past 4 GiB move to a ZIP64 extra, in the format's order", async (t) => {
  const big = record({ size: 6_000_000_000, compressedSize: 5_000_000_000, offset: 4_500_000_000, unixSeconds: null });
  const buf = centralHeader(big, false);
  t.equal(buf.readUInt16LE(6), 45, "needs version 4.5");
  t.equal(buf.readUInt32LE(20), 0xffffffff);
  t.equal(buf.readUInt32LE(24), 0xffffffff);
  t.equal(buf.readUInt32LE(42), 0xffffffff);
  const zip64 = extras(buf, 46 + 5, buf.readUInt16LE(30)).get(0x0001)!;
  t.equal(zip64.length, 24);
  t.same([u64(zip64, 0), u64(zip64, 8), u64(zip64, 16)], [6_000_000_000, 5_000_000_000, 4_500_000_000]);

  const onlyOffset = centralHeader(record({ offset: 4_300_000_000 }), false);
  const field = extras(onlyOffset, 46 + 5, onlyOffset.readUInt16LE(30)).get(0x0001)!;
  t.equal(field.length, 8, "only the overflowing field");
  t.equal(u64(field, 0), 4_300_000_000);
  t.equal(onlyOffset.readUInt32LE(24), 20, "sizes stay in place");
});

t.test("a streamed entry's local header defers CRC and sizes; ZIP64 makes the descriptor 64-bit", async (t) => {
  const streamed = record({ flags: flagUtf8 | flagDataDescriptor });
  const local = localHeader(streamed);
  t.same([local.readUInt32LE(14), local.readUInt32LE(18), local.readUInt32LE(22)], [0, 0, 0]);
  t.equal(dataDescriptor(streamed).length, 16);
  const wide = record({ flags: flagUtf8 | flagDataDescriptor, zip64Local: true, size: 5_000_000_000, compressedSize: 4_400_000_000 });
  const wideLocal = localHeader(wide);
  t.equal(wideLocal.readUInt32LE(22), 0xffffffff);
  t.same(extras(wideLocal, 30 + 5, wideLocal.readUInt16LE(28)).get(0x0001), Buffer.alloc(16), "zeros: the descriptor has the sizes");
  const descriptor = dataDescriptor(wide);
  t.equal(descriptor.length, 24);
  t.same([descriptor.readUInt32LE(4), u64(descriptor, 8), u64(descriptor, 16)], [0x12345678, 4_400_000_000, 5_000_000_000]);
});

t.test("end records: classic alone, ZIP64 record and locator when anything overflows", async (t) => {
  const plain = endRecords(3, 1000, 200, false);
  t.equal(plain.length, 22);
  t.same([plain.readUInt16LE(10), plain.readUInt32LE(12), plain.readUInt32LE(16)], [3, 200, 1000]);

  const far = endRecords(70_000, 5_000_000_000, 9_000_000, false);
  t.equal(far.length, 56 + 20 + 22);
  t.equal(far.readUInt32LE(0), 0x06064b50);
  t.same([u64(far, 24), u64(far, 32), u64(far, 40), u64(far, 48)], [70_000, 70_000, 9_000_000, 5_000_000_000]);
  t.equal(far.readUInt32LE(56), 0x07064b50);
  t.equal(u64(far, 64), 5_009_000_000, "the locator points at the ZIP64 record");
  t.same([far.readUInt16LE(76 + 10), far.readUInt32LE(76 + 12), far.readUInt32LE(76 + 16)], [0xffff, 9_000_000, 0xffffffff]);
});
