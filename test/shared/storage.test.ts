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
