import { Readable } from "node:stream";
import { randomBytes } from "node:crypto";
import t from "tap";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import { freshDatabase } from "../support/db.ts";

t.test("PostgreSQL storage streams files in chunks", async (t) => {
  const db = await freshDatabase(t);
  const storage = new PostgresStorage(db.pool);
  const big = randomBytes(3 * 1024 * 1024 + 123);
  async function* pieces() {
    for (let i = 0; i < big.length; i += 65_536) yield big.subarray(i, i + 65_536);
  }
  const info = await storage.put("archives/1/generation.zip", Readable.from(pieces()), { contentType: "application/zip" });
  t.equal(info.size, big.length);
  const found = await storage.read("archives/1/generation.zip");
  const chunks: Buffer[] = [];
  for await (const chunk of found!.stream) chunks.push(chunk as Buffer);
  t.ok(Buffer.concat(chunks).equals(big), "read back byte for byte");
  t.ok(chunks.length >= 4, "streamed in chunks");

  // Pieces that do not divide a chunk: each chunk is assembled across pieces, in buffers reused in turn.
  const odd = randomBytes(4 * 1024 * 1024 + 7);
  async function* oddPieces() {
    for (let i = 0; i < odd.length; i += 100_003) yield odd.subarray(i, i + 100_003);
  }
  t.equal((await storage.put("archives/1/odd.zip", Readable.from(oddPieces()))).size, odd.length);
  t.ok((await storage.readBuffer("archives/1/odd.zip"))!.equals(odd), "odd pieces read back byte for byte");

  await storage.put("archives/1/generation.zip", Buffer.from("replaced"));
  t.equal((await storage.readBuffer("archives/1/generation.zip"))!.toString(), "replaced");
  t.equal(await storage.read("nothing/here"), null);
  await storage.put("tmp/old", Buffer.from("x"), { expiresAt: new Date(Date.now() - 1000) });
  t.equal(await storage.deleteExpired(), 1);
  t.equal(await storage.delete("archives/1/generation.zip"), true);
  t.equal(await storage.delete("archives/1/generation.zip"), false);
  for (const key of ["../etc/passwd", "/abs", "a//b", "a/", "", "a/../b"]) {
    await t.rejects(storage.put(key, Buffer.from("x")), /Unsafe storage key/, `refuses ${JSON.stringify(key)}`);
  }
});

t.test("a file removed or replaced while it is read fails its stream instead of ending short", async (t) => {
  const db = await freshDatabase(t);
  const storage = new PostgresStorage(db.pool);
  const MB = 1024 * 1024;
  for (const [name, change] of [
    ["removed", (key: string) => storage.delete(key)],
    ["replaced", (key: string) => storage.put(key, Buffer.from("new content"))],
  ] as const) {
    const key = `archives/${name}/generation.zip`;
    await storage.put(key, randomBytes(4 * MB));
    const found = (await storage.read(key))!;
    const reader = found.stream[Symbol.asyncIterator]();
    const first = await reader.next();
    t.equal((first.value as Buffer).length, MB, `${name}: the first chunk arrives`);
    await change(key);
    let received = MB;
    const drained = (async () => {
      for (let next = await reader.next(); !next.done; next = await reader.next()) received += (next.value as Buffer).length;
    })();
    await t.rejects(drained, /removed or replaced while it was read/, `${name}: the stream fails`);
    t.ok(received < found.info.size, `${name}: after ${received} of ${found.info.size} bytes`);
  }
  const whole = randomBytes(2 * MB + 5);
  await storage.put("archives/kept/generation.zip", whole);
  t.ok((await storage.readBuffer("archives/kept/generation.zip"))!.equals(whole), "an untouched file still reads whole");
});

t.test("a range of a file streams only its bytes; one outside the file is refused before reading", async (t) => {
  const db = await freshDatabase(t);
  const storage = new PostgresStorage(db.pool);
  const big = randomBytes(2 * 1024 * 1024 + 5);
  await storage.put("archives/2/range.zip", big);
  const read = async (start: number, end: number) => {
    const found = await storage.read("archives/2/range.zip", { range: () => ({ start, end }) });
    const chunks: Buffer[] = [];
    for await (const chunk of found!.stream) chunks.push(chunk as Buffer);
    t.same(found!.range, { start, end });
    return Buffer.concat(chunks);
  };
  for (const [start, end] of [
    [0, 0],
    [1024 * 1024 - 1, 1024 * 1024],
    [5, 2 * 1024 * 1024 + 4],
    [2 * 1024 * 1024 + 4, 2 * 1024 * 1024 + 4],
  ] as const) {
    t.ok((await read(start, end)).equals(big.subarray(start, end + 1)), `bytes ${start}-${end}`);
  }
  const first = (await storage.stat("archives/2/range.zip"))!.version;
  await storage.put("archives/2/range.zip", big);
  t.not((await storage.stat("archives/2/range.zip"))!.version, first, "the same bytes stored again are another version");
  for (const range of [{ start: 0, end: big.length }, { start: 10, end: 9 }, { start: -1, end: 5 }]) {
    await t.rejects(storage.read("archives/2/range.zip", { range: () => range }), RangeError, JSON.stringify(range));
  }
  const empty = await storage.put("archives/2/empty.zip", Buffer.alloc(0));
  t.equal(empty.size, 0);
  t.equal((await storage.readBuffer("archives/2/empty.zip"))!.length, 0, "an empty file reads as empty");
});
