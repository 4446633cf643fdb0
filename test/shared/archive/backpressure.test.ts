import { randomBytes } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import t from "tap";
import { createZipStream, type ZipEntryInput } from "../../../shared/archive/zipWriter.ts";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { until } from "../../support/wait.ts";

// Incompressible 4 KiB files, so archive bytes track input bytes one to one.
const block = randomBytes(4096);
const fileCount = 5000;

t.test("a consumer that stops reading stops the writer", async (t) => {
  let pulled = 0;
  const entries = function* (): Generator<ZipEntryInput> {
    for (let i = 0; i < fileCount; i++) {
      pulled++;
      yield { path: `f/${i}.bin`, content: block };
    }
  };
  let written = 0;
  let release: (() => void) | undefined;
  const stuck = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      written += chunk.length;
      release = callback; // never acknowledged until the test says so
    },
  });
  const done = pipeline(createZipStream(entries()), stuck);
  // A writer that ignored the stuck consumer would pull all 5,000 entries in these pauses; one
  // that stops holds at about a hundred (its read-ahead and the buffered chunks). On a busy
  // machine the writer may still be filling its buffers at the first look, so the checks
  // bound the count at two moments instead of asking that it stood still between them.
  await until(() => written > 0, { timeoutMs: 60_000, message: "a first chunk to reach the consumer" });
  await sleep(300);
  t.ok(pulled < 150, `only ${pulled} of ${fileCount} entries were pulled while the consumer was stuck`);
  await sleep(700);
  t.ok(pulled < 150, `and still only ${pulled} a while later`);
  // Let it run to the end, acknowledging every chunk.
  const flowing = stuck as Writable & { _write: Writable["_write"] };
  flowing._write = (chunk: Buffer, _encoding, callback) => {
    written += chunk.length;
    callback();
  };
  release?.();
  await done;
  t.equal(pulled, fileCount);
  t.ok(written > fileCount * 4096);
});

t.test("a slow consumer keeps the bytes in flight bounded", async (t) => {
  let pulledBytes = 0;
  let consumed = 0;
  let maxAhead = 0;
  const entries = function* (): Generator<ZipEntryInput> {
    for (let i = 0; i < fileCount; i++) {
      pulledBytes += block.length;
      maxAhead = Math.max(maxAhead, pulledBytes - consumed);
      yield { path: `f/${i}.bin`, content: block };
    }
  };
  const slow = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      consumed += chunk.length;
      setImmediate(callback);
    },
  });
  await pipeline(createZipStream(entries()), slow);
  t.ok(maxAhead < 2 * 1024 * 1024, `at most ${(maxAhead / 1024).toFixed(0)} KiB of ${(pulledBytes / 1024 / 1024).toFixed(0)} MiB read ahead of the consumer`);
});

t.test("a streamed entry is read only as fast as the archive is consumed", async (t) => {
  const chunk = randomBytes(64 * 1024);
  const total = 16 * 1024 * 1024;
  let produced = 0;
  let consumed = 0;
  let maxAhead = 0;
  const source = new Readable({
    read() {
      if (produced >= total) return this.push(null);
      produced += chunk.length;
      maxAhead = Math.max(maxAhead, produced - consumed);
      this.push(chunk);
    },
  });
  const slow = new Writable({
    write(data: Buffer, _encoding, callback) {
      consumed += data.length;
      setTimeout(callback, 1);
    },
  });
  await pipeline(createZipStream([{ path: "big.bin", content: source }, { path: "after.txt", content: "end" }]), slow);
  t.ok(consumed > total, "everything arrived");
  t.ok(maxAhead < 4 * 1024 * 1024, `the source ran at most ${(maxAhead / 1024).toFixed(0)} KiB ahead of the consumer`);
});

t.test("lazy contents load concurrently, at most readAhead at a time", async (t) => {
  let loading = 0;
  let maxLoading = 0;
  const entries = function* (): Generator<ZipEntryInput> {
    for (let i = 0; i < 200; i++) {
      yield {
        path: `lazy/${i}.txt`,
        content: async () => {
          maxLoading = Math.max(maxLoading, ++loading);
          await sleep(1);
          loading--;
          return `file ${i}\n`.repeat(10);
        },
      };
    }
  };
  const chunks: Buffer[] = [];
  await pipeline(createZipStream(entries(), { readAhead: 4 }), new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) }));
  t.ok(maxLoading > 1, `loads overlap (${maxLoading} at once)`);
  t.ok(maxLoading <= 5, "never more than readAhead (+ the entry being written)");
  const back = await extractToMemory(Buffer.concat(chunks));
  t.equal(back.length, 200);
  t.equal(back[199]!.content.toString(), "file 199\n".repeat(10), "order is kept");
});
