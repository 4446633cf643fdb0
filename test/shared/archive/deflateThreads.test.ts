import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import t, { type Test } from "tap";
import { deflateBatch, makeEngine, type BatchReply } from "../../../shared/archive/deflateThread.ts";
import { batchBytes, DeflateBatcher, DeflateThreads, deflateThreads } from "../../../shared/archive/deflateThreads.ts";
import { createZipStream, type ZipEntryInput } from "../../../shared/archive/zipWriter.ts";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { seededRandom } from "../../support/random.ts";
import { sourceFiles } from "./support/sourceFiles.ts";

const text = [...sourceFiles(400, 5)].map((f) => Buffer.from(f.content));

/**
 * Inputs around the store-or-deflate boundary: text with a growing share of random bytes, from
 * well compressible to not at all, so some deflate to just under, at and just over their length.
 */
function mixed(count: number): Buffer[] {
  const rnd = seededRandom(21);
  return Array.from({ length: count }, (_, i) => {
    const length = 64 + Math.floor(rnd() * 3000);
    const data = Buffer.alloc(length, text[i % text.length]!.subarray(0, length));
    const noisy = Math.floor((length * (i % 50)) / 50) + Math.floor(rnd() * 10);
    for (let j = 0; j < Math.min(noisy, length); j++) data[j] = Math.floor(rnd() * 256);
    return data;
  });
}

/** Packs entries as the batcher does and deflates them in this thread. */
function batchOf(entries: Buffer[], portable: boolean): Extract<BatchReply, { ok: true }> {
  const size = entries.reduce((a, e) => a + e.length, 0);
  const input = new ArrayBuffer(size);
  let at = 0;
  for (const e of entries) {
    new Uint8Array(input, at, e.length).set(e);
    at += e.length;
  }
  const engines = new Map([[6, makeEngine(zlib, 6, portable)]]);
  const reply = deflateBatch(zlib, engines, { id: 1, level: 6, input, output: new ArrayBuffer(size), lengths: entries.map((e) => e.length) });
  if (!reply.ok) throw new Error(reply.message);
  return reply;
}

for (const portable of [false, true]) {
  t.test(`a batch on the ${portable ? "portable (deflateRawSync)" : "native handle"} engine: CRCs, streams, and stored exactly when deflate does not shrink`, async (t) => {
    const entries = [...mixed(2000), randomBytes(5000), Buffer.from("ab"), Buffer.alloc(100_000, 1)];
    const reply = batchOf(entries, portable);
    let at = 0;
    const wrong: string[] = [];
    entries.forEach((entry, i) => {
      const size = reply.sizes[i]!;
      if (reply.crcs[i] !== zlib.crc32(entry)) wrong.push(`${i}: crc`);
      // The writer's rule: deflated when the complete stream is shorter than the entry.
      const full = portable ? zlib.deflateRawSync(entry, { level: 6 }).length : zlib.deflateRawSync(entry, { level: 6, finishFlush: zlib.constants.Z_FULL_FLUSH }).length + 2;
      const expected = full < entry.length ? full : -1;
      if (size !== expected) wrong.push(`${i}: size ${size}, expected ${expected} for ${entry.length} bytes`);
      if (size >= 0 && !zlib.inflateRawSync(Buffer.from(reply.output, at, size)).equals(entry)) wrong.push(`${i}: does not inflate back`);
      at += entry.length;
    });
    t.same(wrong, []);
    const stored = reply.sizes.filter((s) => s < 0).length;
    const near = entries.filter((e, i) => reply.sizes[i]! >= 0 && reply.sizes[i]! > e.length - 8).length;
    t.ok(stored > 10 && near > 0, `both outcomes met, ${near} within 8 bytes of the boundary (${stored} stored)`);
  });
}

/** Each result of a batcher is the entry's CRC and a body that gives the entry back. */
async function check(t: Test, batcher: DeflateBatcher, data: Buffer[]): Promise<void> {
  const tickets = data.map((d) => batcher.add(d));
  const bad: number[] = [];
  for (const [i, ticket] of tickets.entries()) {
    const { crc, body, deflated } = await batcher.result(ticket);
    const back = deflated ? zlib.inflateRawSync(body) : Buffer.from(body);
    if (crc !== zlib.crc32(data[i]!) || !back.equals(data[i]!)) bad.push(i);
    batcher.done(ticket);
  }
  t.same(bad, [], `${data.length} entries come back with their CRCs, in order`);
}

/** Entries at every batch boundary: filling one exactly, one a batch long, longer than one, one byte over. */
function boundaries(): Buffer[] {
  const half = batchBytes / 2;
  return [
    ...text.slice(0, 50),
    Buffer.alloc(half, "a"),
    Buffer.alloc(half, "b"), // with the previous one, exactly a batch
    Buffer.alloc(batchBytes, "c"),
    Buffer.alloc(batchBytes + 1, "d"),
    randomBytes(200_000), // its own batch, stored
    ...text.slice(50, 100),
    Buffer.alloc(batchBytes - 100, "e"),
    Buffer.alloc(101, "f"), // one byte past the batch: starts the next
    ...text.slice(100),
  ];
}

t.test("batches deflated on this thread while a thread starts, then on the threads, at every batch boundary", async (t) => {
  const threads = new DeflateThreads(2);
  await check(t, new DeflateBatcher(6, threads), boundaries()); // a fresh pool: the first batches are deflated here
  await threads.warm();
  t.ok(threads.workers.length >= 1);
  await check(t, new DeflateBatcher(6, threads), boundaries());
  await check(t, new DeflateBatcher(1, threads), boundaries());
  await check(t, new DeflateBatcher(9, threads), [...text, ...text]);
});

t.test("a thread that dies fails its batches instead of leaving them waiting, and is replaced", async (t) => {
  const threads = new DeflateThreads(1);
  await threads.warm();
  const batcher = new DeflateBatcher(6, threads);
  const [worker] = threads.workers;
  void worker!.terminate();
  const ticket = batcher.add(Buffer.alloc(batchBytes, "x")); // a full batch: sent to the dying thread at once
  await t.rejects(batcher.result(ticket), /deflate thread exited/);
  await check(t, new DeflateBatcher(6, threads), text.slice(0, 100));
  await threads.warm();
  t.not(threads.workers[0], worker, "a new thread took its place");
  await check(t, new DeflateBatcher(6, threads), text);
});

t.test("an archive whose deflate thread dies errors instead of hanging; the next archive is whole", async (t) => {
  await deflateThreads.warm();
  const entries = function* (): Generator<ZipEntryInput> {
    for (let i = 0; i < 1000; i++) yield { path: `f/${i}.txt`, content: text[i % text.length]! };
    // The writer reads an entry's path just before it deflates the entry: the threads are
    // stopped there, and this entry's batch (a batch of its own) goes to a thread that will
    // never answer, before the loop can learn that the thread has gone.
    yield {
      get path() {
        for (const worker of deflateThreads.workers) void worker.terminate();
        return "stopped/here.bin";
      },
      content: Buffer.alloc(100 * 1024, 7),
    };
    for (let i = 0; i < 100; i++) yield { path: `g/${i}.txt`, content: text[i]! };
  };
  const sink = new Writable({ write: (_c: Buffer, _e, cb) => cb() });
  const failed = pipeline(createZipStream(entries()), sink);
  const guard = new Promise((_, reject) => setTimeout(() => reject(new Error("the archive hung")), 20_000).unref());
  await t.rejects(Promise.race([failed, guard]), /deflate thread exited/);
  const chunks: Buffer[] = [];
  await pipeline(createZipStream(text.map((content, i) => ({ path: `g/${i}.txt`, content }))), new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) }));
  const back = await extractToMemory(Buffer.concat(chunks));
  t.same(
    back.map((e) => e.content.equals(text[Number(e.path.slice(2, -4))]!)),
    text.map(() => true),
  );
});

t.test("archives written at the same time share the threads and each comes out whole", async (t) => {
  const sets = [0, 1, 2, 3].map((s) => [...sourceFiles(1500, 100 + s)].map((f) => ({ path: f.path, content: Buffer.from(f.content) })));
  const archives = await Promise.all(
    sets.map(async (files) => {
      const chunks: Buffer[] = [];
      await pipeline(createZipStream(files), new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) }));
      return extractToMemory(Buffer.concat(chunks));
    }),
  );
  archives.forEach((back, s) => {
    const files = sets[s]!;
    t.equal(back.length, files.length);
    t.equal(
      back.findIndex((e, i) => e.path !== files[i]!.path || !e.content.equals(files[i]!.content)),
      -1,
      `archive ${s}: every entry in order, byte for byte`,
    );
  });
});

t.test("a process whose archive is done exits with its deflate threads idle", async (t) => {
  const writer = fileURLToPath(new URL("../../../shared/archive/zipWriter.ts", import.meta.url));
  const pool = fileURLToPath(new URL("../../../shared/archive/deflateThreads.ts", import.meta.url));
  const script = `
    const { zipChunks } = await import(${JSON.stringify(writer)});
    const { deflateThreads } = await import(${JSON.stringify(pool)});
    await deflateThreads.warm(); // a thread is running before the archive starts
    let bytes = 0;
    const entries = Array.from({ length: 3000 }, (_, i) => ({ path: "f/" + i + ".txt", content: ("line " + i + "\\n").repeat(200) }));
    for await (const chunk of zipChunks(entries)) bytes += chunk.length;
    console.log("archived", bytes, "with", deflateThreads.workers.length, "thread(s)");
  `;
  const started = Date.now();
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  t.equal(res.signal, null, `not killed by the guard (${Date.now() - started} ms)`);
  t.equal(res.status, 0, res.stderr);
  t.match(res.stdout, /archived \d+ with [1-9]/);
});
