/**
 * Deflate of whole in-memory ZIP entries on worker threads, in batches. Through zlib's stream
 * interface every small entry cost the writer's thread ~30 µs (a stream write, a libuv round
 * trip, a callback), as much as deflating it. Here the writer copies entries into a batch of
 * ~64 KiB and one message takes the batch to a thread, which computes each entry's CRC and
 * deflate stream synchronously (deflateThread.ts) and answers the batch in one message; the
 * writer's thread only frames headers.
 *
 * Glossary: the *threads* are the process's (started on first use, kept while idle without
 * holding the process open, replaced after one dies) and shared by every archive being
 * written; each archive has its own {@link DeflateBatcher}. A *ticket* names an entry's batch
 * and place. Batch buffers (input and output) travel to a thread and back, transferred, not
 * copied, and are reused.
 */
import os from "node:os";
import { Worker } from "node:worker_threads";
import zlib from "node:zlib";
import { deflateBatch, threadSource, type BatchReply, type BatchRequest, type Engine } from "./deflateThread.ts";

type Done = Extract<BatchReply, { ok: true }>;

interface Thread {
  worker: Worker;
  /** Whether the thread has started and takes messages (a start takes ~100 ms). */
  online: boolean;
  pending: Map<number, { resolve: (reply: Done) => void; reject: (error: Error) => void }>;
}

/** Input bytes of one batch: enough entries to pay for a message, small enough to keep the threads fed. */
export const batchBytes = 64 * 1024;
/** Buffers kept for reuse across archives (1 MiB). */
const spareLimit = 16;

/** The process's deflate threads. */
export class DeflateThreads {
  private readonly threads: Thread[] = [];
  private readonly spares: ArrayBuffer[] = [];
  /** Engines of batches deflated on this thread while no deflate thread is online yet. */
  private readonly engines = new Map<number, Engine>();
  private nextId = 0;
  private readonly size: number;

  /** @param size threads at most */
  constructor(size: number) {
    this.size = size;
  }

  /** The threads' workers (for tests that stop one). */
  get workers(): Worker[] {
    return this.threads.map((t) => t.worker);
  }

  /** Resolves once a thread takes messages, starting one if none is running. */
  async warm(): Promise<void> {
    if (this.threads.some((t) => t.online)) return;
    if (this.threads.length === 0) this.spawn();
    const worker = this.threads[0]!.worker;
    worker.ref(); // the wait keeps the process up
    try {
      await new Promise<void>((resolve, reject) => {
        worker.once("online", () => resolve());
        worker.once("exit", () => reject(new Error("a deflate thread exited while starting")));
      });
    } finally {
      const thread = this.threads.find((t) => t.worker === worker);
      if (!thread || thread.pending.size === 0) worker.unref();
    }
  }

  /** A batch buffer of `batchBytes`, reused when one is free. */
  buffer(): ArrayBuffer {
    return this.spares.pop() ?? new ArrayBuffer(batchBytes);
  }

  /** Gives a batch buffer back for reuse. */
  recycle(buffer: ArrayBuffer): void {
    if (buffer.byteLength === batchBytes && !buffer.detached && this.spares.length < spareLimit) this.spares.push(buffer);
  }

  /**
   * Deflates the entries packed in the request; its buffers belong to the threads from now on.
   * While no thread has started yet, the batch is deflated here and now (starting one), so the
   * first entries of a process's first archive do not wait ~100 ms for a thread.
   * @throws Error (rejects) when the thread fails or dies before answering
   */
  run(request: Omit<BatchRequest, "id">): Promise<Done> {
    const id = this.nextId++;
    const thread = this.pick();
    if (!thread) {
      // On the next turn of the event loop, not at once: a writer whose entries are all in
      // memory would otherwise never let the loop run, and never see the thread come online.
      return new Promise<Done>((resolve, reject) =>
        setImmediate(() => {
          try {
            resolve(deflateBatch(zlib, this.engines, { id, ...request }) as Done);
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        }),
      );
    }
    return new Promise<Done>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.ref(); // a batch in flight keeps the process up until it is answered
      thread.worker.postMessage({ id, ...request } satisfies BatchRequest, [request.input, request.output]);
    });
  }

  /** The online thread with the fewest batches in flight, starting another while the pool may grow and all are busy; null while none is online. */
  private pick(): Thread | null {
    let best: Thread | null = null;
    for (const thread of this.threads) if (thread.online && (!best || thread.pending.size < best.pending.size)) best = thread;
    if (this.threads.length < this.size && (!best || best.pending.size > 0)) this.spawn();
    return best;
  }

  private spawn(): void {
    const worker = new Worker(threadSource, {
      eval: true,
      // A thread holds one batch at a time and makes no garbage per entry: a small heap suffices.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    const thread: Thread = { worker, online: false, pending: new Map() };
    worker.on("online", () => (thread.online = true));
    worker.on("message", (reply: BatchReply) => this.answer(thread, reply));
    worker.on("error", (error: Error) => this.drop(thread, new Error(`a deflate thread failed: ${error.message}`)));
    worker.on("exit", (code) => this.drop(thread, new Error(`a deflate thread exited (code ${code})`)));
    worker.unref();
    this.threads.push(thread);
  }

  private answer(thread: Thread, reply: BatchReply): void {
    const waiting = thread.pending.get(reply.id);
    if (!waiting) return;
    thread.pending.delete(reply.id);
    if (thread.pending.size === 0) thread.worker.unref();
    if (reply.ok) waiting.resolve(reply);
    else waiting.reject(new Error(`deflate failed: ${reply.message}`));
  }

  /** Forgets a thread that failed or exited (the next batch starts another); its batches fail with `error`. */
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
 * The process's deflate threads: one fewer than the cores, at least one, at most three (the
 * writer's own thread needs a core). Measured on 2 cores: docs/notes/archive.md.
 */
export const deflateThreads = new DeflateThreads(Math.max(1, Math.min(3, os.availableParallelism() - 1)));

/** An entry handed to a {@link DeflateBatcher}: its batch and its place in it. */
export interface DeflateTicket {
  batch: Batch;
  index: number;
  offset: number;
  length: number;
}

/** An entry's CRC-32 and the bytes to write: its deflate stream, or the entry itself (stored). */
export interface Deflated {
  crc: number;
  body: Buffer;
  deflated: boolean;
}

interface Batch {
  input: ArrayBuffer;
  lengths: number[];
  used: number;
  reply: Promise<Done> | null;
  /** Entries whose results are not yet taken; at zero the buffers go back for reuse. */
  open: number;
}

/**
 * The batches of one archive. Entries are added in order; a batch is sent when the next entry
 * does not fit, or when the writer asks for the result of an entry still in it.
 */
export class DeflateBatcher {
  private current: Batch | null = null;
  private readonly level: number;
  private readonly threads: DeflateThreads;

  constructor(level: number, threads: DeflateThreads = deflateThreads) {
    this.level = level;
    this.threads = threads;
  }

  /** Queues `data` (non-empty) for CRC and deflate; it is copied, so the caller may let it go. */
  add(data: Uint8Array): DeflateTicket {
    if (this.current && this.current.used + data.length > this.current.input.byteLength) this.send(this.current);
    if (!this.current) {
      const input = data.length > batchBytes ? new ArrayBuffer(data.length) : this.threads.buffer();
      this.current = { input, lengths: [], used: 0, reply: null, open: 0 };
    }
    const batch = this.current;
    new Uint8Array(batch.input, batch.used, data.length).set(data);
    const ticket = { batch, index: batch.lengths.push(data.length) - 1, offset: batch.used, length: data.length };
    batch.used += data.length;
    batch.open++;
    if (batch.used === batch.input.byteLength) this.send(batch);
    return ticket;
  }

  /**
   * The entry's CRC and body, sending its batch if it is still open. The body is a view of the
   * batch's buffers: copy it before calling {@link done} for the ticket.
   * @throws Error (rejects) when the batch's thread failed or died
   */
  async result(ticket: DeflateTicket): Promise<Deflated> {
    const { batch, index, offset, length } = ticket;
    if (!batch.reply) this.send(batch);
    const reply = await batch.reply!;
    const size = reply.sizes[index]!;
    const body = size < 0 ? Buffer.from(reply.input, offset, length) : Buffer.from(reply.output, offset, size);
    return { crc: reply.crcs[index]!, body, deflated: size >= 0 };
  }

  /** Says the ticket's body has been copied; after its batch's last entry the buffers are reused. */
  done(ticket: DeflateTicket): void {
    const batch = ticket.batch;
    if (--batch.open > 0 || !batch.reply) return;
    void batch.reply.then((reply) => {
      this.threads.recycle(reply.input);
      this.threads.recycle(reply.output);
    });
  }

  private send(batch: Batch): void {
    if (this.current === batch) this.current = null;
    const output = batch.input.byteLength === batchBytes ? this.threads.buffer() : new ArrayBuffer(batch.input.byteLength);
    batch.reply = this.threads.run({ level: this.level, input: batch.input, output, lengths: batch.lengths });
    batch.reply.catch(() => {}); // awaited through result(); this only silences an abandoned archive's
  }
}
