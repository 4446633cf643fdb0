/**
 * Deflate of whole in-memory entries on worker threads, in batches. The zip writer's per-entry
 * work on its own thread was the cost of many small files: one zlib stream write per entry
 * went through the stream machinery and a libuv round trip (~25 µs of the event loop each,
 * as much as the deflate of a 2 KB file). Here entries are copied into a batch of ~64 KiB
 * and a thread deflates each with `zlib.deflateRawSync` (a complete raw deflate stream, its
 * native state freed at once) and answers with all outputs packed in one buffer: the
 * writer's thread pays one message per batch, and deflate runs beside it on the other cores.
 *
 * The threads are the process's (started on demand, kept while idle without holding the
 * process open), shared by every archive being written; each archive has its own
 * {@link DeflateBatcher}. Batch buffers travel to a thread and back (transferred, not copied)
 * and are reused, so the writer makes no garbage per entry beyond its result's view.
 */
import os from "node:os";
import { Worker } from "node:worker_threads";
import zlib from "node:zlib";

/** What the host sends a deflate thread: the batch's entries one after another in `input`. */
export interface DeflateRequest {
  id: number;
  level: number;
  input: ArrayBuffer;
  lengths: number[];
}

/** What a thread answers: the outputs one after another, and the input buffer handed back. */
export type DeflateReply =
  | { id: number; ok: true; input: ArrayBuffer; output: ArrayBuffer; sizes: number[] }
  | { id: number; ok: false; message: string };

type Done = Extract<DeflateReply, { ok: true }>;

interface Thread {
  worker: Worker;
  /** Whether the thread has started and takes messages (a start takes 30–300 ms). */
  online: boolean;
  pending: Map<number, { resolve: (reply: Done) => void; reject: (error: Error) => void }>;
}

/** Input bytes of one batch: large enough to pay for a message, small enough to keep two threads fed. */
export const batchBytes = 64 * 1024;
/** Batch buffers kept for reuse across archives (2 MiB). */
const spareLimit = 32;

/**
 * The thread's program, plain JavaScript: a thread started from a .ts file loads Node's type
 * stripper (a WebAssembly module) first, which cost ~25 MB of memory and ~200 ms per thread.
 * Per message it deflates each entry of the batch into a complete raw deflate stream, with an
 * output buffer fitted to the entry (one allocation instead of 16 KiB ones), and answers with
 * the outputs packed into one buffer, handing the input buffer back for reuse.
 */
const threadSource = `
const { parentPort } = require("node:worker_threads");
const zlib = require("node:zlib");
parentPort.on("message", ({ id, level, input, lengths }) => {
  try {
    const outputs = [];
    let total = 0;
    let at = 0;
    for (const length of lengths) {
      const chunkSize = Math.max(zlib.constants.Z_MIN_CHUNK, length + (length >>> 8) + 64);
      const output = zlib.deflateRawSync(new Uint8Array(input, at, length), { level, chunkSize });
      outputs.push(output);
      total += output.length;
      at += length;
    }
    const packed = new Uint8Array(total);
    const sizes = [];
    let offset = 0;
    for (const output of outputs) {
      packed.set(output, offset);
      offset += output.length;
      sizes.push(output.length);
    }
    parentPort.postMessage({ id, ok: true, input, output: packed.buffer, sizes }, [input, packed.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: String(error && error.message || error) });
  }
});
`;

/** What the thread's program does, for a batch deflated on this thread instead. */
function deflateBatch(level: number, input: ArrayBuffer, lengths: number[]): { output: ArrayBuffer; sizes: number[] } {
  const outputs: Buffer[] = [];
  let at = 0;
  for (const length of lengths) {
    const chunkSize = Math.max(zlib.constants.Z_MIN_CHUNK, length + (length >>> 8) + 64);
    outputs.push(zlib.deflateRawSync(new Uint8Array(input, at, length), { level, chunkSize }));
    at += length;
  }
  const packed = Buffer.concat(outputs);
  const output = packed.buffer.slice(packed.byteOffset, packed.byteOffset + packed.length);
  return { output, sizes: outputs.map((o) => o.length) };
}

/** The process's deflate threads. */
class DeflateThreads {
  private readonly threads: Thread[] = [];
  private readonly spares: ArrayBuffer[] = [];
  private nextId = 0;
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  /** Starts every thread now; resolves once they take messages. */
  async warm(): Promise<void> {
    while (this.threads.length < this.size) this.spawn();
    const starting = this.threads.filter((t) => !t.online);
    for (const thread of starting) thread.worker.ref(); // the wait keeps the process up
    await Promise.all(starting.map((t) => new Promise((resolve) => t.worker.once("online", resolve))));
    for (const thread of starting) if (thread.pending.size === 0) thread.worker.unref();
  }

  /** A batch buffer of `batchBytes`, reused when one is free. */
  buffer(): ArrayBuffer {
    return this.spares.pop() ?? new ArrayBuffer(batchBytes);
  }

  /**
   * Deflates the entries packed in `input`; the buffer belongs to the threads from now on.
   * While no thread has started yet, the batch is deflated here and now, so the first entries
   * of a process's first archive do not wait for a thread to start.
   */
  run(level: number, input: ArrayBuffer, lengths: number[]): Promise<Done> {
    const thread = this.pick();
    const id = this.nextId++;
    if (!this.threads.some((t) => t.online)) {
      try {
        const done = deflateBatch(level, input, lengths);
        this.recycle(input);
        return Promise.resolve({ id, ok: true, input, ...done });
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    return new Promise<Done>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.ref(); // a batch in flight keeps the process up until it is answered
      thread.worker.postMessage({ id, level, input, lengths } satisfies DeflateRequest, [input]);
    });
  }

  /** The started thread with the fewest batches in flight; a new one while the pool may grow and all are busy. */
  private pick(): Thread {
    let best: Thread | null = null;
    for (const thread of this.threads) if (thread.online && (!best || thread.pending.size < best.pending.size)) best = thread;
    if (!best && this.threads.length > 0) return this.threads[0]!; // still starting
    if (best && (best.pending.size === 0 || this.threads.length >= this.size)) return best;
    return this.spawn();
  }

  private spawn(): Thread {
    const worker = new Worker(threadSource, {
      eval: true,
      // The thread holds a batch and its outputs at a time; a small heap keeps its memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 32 },
    });
    const thread: Thread = { worker, online: false, pending: new Map() };
    worker.on("online", () => (thread.online = true));
    worker.on("message", (reply: DeflateReply) => this.answer(thread, reply));
    worker.on("error", (error: Error) => this.drop(thread, error));
    worker.on("exit", () => this.drop(thread, new Error("a deflate thread exited")));
    worker.unref();
    this.threads.push(thread);
    return thread;
  }

  private answer(thread: Thread, reply: DeflateReply): void {
    const waiting = thread.pending.get(reply.id);
    if (!waiting) return;
    thread.pending.delete(reply.id);
    if (thread.pending.size === 0) thread.worker.unref();
    if (!reply.ok) return waiting.reject(new Error(`deflate failed: ${reply.message}`));
    this.recycle(reply.input);
    waiting.resolve(reply);
  }

  private recycle(input: ArrayBuffer): void {
    if (input.byteLength === batchBytes && this.spares.length < spareLimit) this.spares.push(input);
  }

  /** Ends a thread that failed or exited; its batches fail with `error`. */
  private drop(thread: Thread, error: Error): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    this.threads.splice(at, 1);
    for (const { reject } of thread.pending.values()) reject(error);
    thread.pending.clear();
    void thread.worker.terminate();
  }
}

/**
 * One thread fewer than cores (at least one, at most three): the writer's thread keeps a core.
 * On two cores, a second thread measured no faster and cost ~25 MB more resident memory.
 */
const threads = new DeflateThreads(Math.max(1, Math.min(3, os.availableParallelism() - 1)));

/**
 * Starts the process's deflate threads ahead of its first archive (a worker process does at
 * start), so that archive neither waits for them nor deflates on its own thread meanwhile.
 */
export const warmDeflateThreads = (): Promise<void> => threads.warm();

/** An entry handed to a {@link DeflateBatcher}: its batch and place in it. */
export interface DeflateTicket {
  batch: Batch;
  index: number;
}

interface Batch {
  input: ArrayBuffer;
  lengths: number[];
  used: number;
  results: Promise<Buffer[]> | null;
}

/**
 * The batches of one archive. Entries are added in order; a batch is sent when full, or when
 * the writer asks for the result of an entry still in it.
 */
export class DeflateBatcher {
  private open: Batch | null = null;
  private readonly level: number;

  constructor(level: number) {
    this.level = level;
  }

  /** Queues `data` (non-empty) for deflate; it is copied, so the caller may let it go. */
  add(data: Buffer): DeflateTicket {
    if (this.open && this.open.used + data.length > this.open.input.byteLength) this.send(this.open);
    if (!this.open) {
      const input = data.length > batchBytes ? new ArrayBuffer(data.length) : threads.buffer();
      this.open = { input, lengths: [], used: 0, results: null };
    }
    const batch = this.open;
    new Uint8Array(batch.input, batch.used, data.length).set(data);
    batch.used += data.length;
    const ticket = { batch, index: batch.lengths.push(data.length) - 1 };
    if (batch.used === batch.input.byteLength) this.send(batch);
    return ticket;
  }

  /** The complete raw deflate stream of the ticket's entry (sending its batch if it is still open). */
  result(ticket: DeflateTicket): Promise<Buffer> {
    if (!ticket.batch.results) this.send(ticket.batch);
    return ticket.batch.results!.then((outputs) => outputs[ticket.index]!);
  }

  private send(batch: Batch): void {
    if (this.open === batch) this.open = null;
    batch.results = threads.run(this.level, batch.input, batch.lengths).then((reply) => {
      const outputs: Buffer[] = [];
      let offset = 0;
      for (const size of reply.sizes) {
        outputs.push(Buffer.from(reply.output, offset, size));
        offset += size;
      }
      return outputs;
    });
    batch.results.catch(() => {}); // awaited through result(); this only silences an abandoned archive's
  }
}
