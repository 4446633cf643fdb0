/**
 * What a deflate thread does with a batch of whole ZIP entries (see deflateThreads.ts). Per
 * entry: its CRC-32, and its raw deflate stream written into the batch's output buffer at the
 * entry's own input offset, or "stored" when that stream would not be shorter than the entry.
 *
 * Glossary: an *engine* is one long-lived zlib deflate state per level. Each entry is written
 * to it with Z_FULL_FLUSH, which ends the block and forgets the history, so the entry's output
 * is a self-contained run of blocks; an empty final block (`03 00`, the technique pigz uses for
 * parallel deflate) appended after it makes it a complete raw deflate stream. The engine calls
 * zlib's native handle synchronously (`writeSync`, what `zlib.deflateRawSync` itself calls),
 * straight from the entry's bytes into the output buffer: no zlib object, output buffer or
 * native state per entry, so a thread makes no garbage per entry and its memory stays flat.
 * When that internal interface is missing (another Node version), the engine falls back to
 * `zlib.deflateRawSync` per entry, which gives an equally valid stream.
 *
 * These functions run in a thread started from their source text (`eval`), so they reach
 * modules only through their `zlib` parameter and `process.getBuiltinModule`, never imports.
 */
import type zlibModule from "node:zlib";

type Zlib = typeof zlibModule;

/** A batch of entries to deflate, what the host sends a thread. */
export interface BatchRequest {
  id: number;
  /** Deflate level, 1–9. */
  level: number;
  /** The entries' bytes, one after another from offset 0. */
  input: ArrayBuffer;
  /** As long as `input`: entry i's deflate stream is written at entry i's input offset. */
  output: ArrayBuffer;
  /** Each entry's length in bytes. */
  lengths: number[];
}

/**
 * A thread's answer: both buffers handed back, and per entry its CRC-32 and the length of its
 * deflate stream in `output`, or -1 when it is stored (deflate did not make it shorter).
 */
export type BatchReply =
  | { id: number; ok: true; input: ArrayBuffer; output: ArrayBuffer; sizes: number[]; crcs: number[] }
  | { id: number; ok: false; message: string };

/** Deflates one entry into `slot`; returns the stream's length, or -1 when it does not fit. */
export type Engine = (entry: Uint8Array, slot: Uint8Array) => number;

/** The parts of a zlib stream's internals the fast engine uses (lib/zlib.js, processChunkSync). */
interface RawHandle {
  writeSync(flush: number, input: Uint8Array, inOffset: number, inLength: number, output: Uint8Array, outOffset: number, outLength: number): void;
  reset(): void;
}

/**
 * An engine at `level`: zlib's handle called directly when this Node has it (unless
 * `portable`), else `zlib.deflateRawSync` per entry.
 */
export function makeEngine(zlib: Zlib, level: number, portable = false): Engine {
  const finalBlock = [0x03, 0x00];
  const stream = zlib.createDeflateRaw({ level }) as zlibModule.DeflateRaw & { _handle?: RawHandle | null; _writeState?: Uint32Array };
  const handle = stream._handle;
  const state = stream._writeState;
  if (portable || !handle || typeof handle.writeSync !== "function" || !(state instanceof Uint32Array)) {
    stream.close();
    return (entry, slot) => {
      const deflated = zlib.deflateRawSync(entry, { level });
      if (deflated.length >= slot.length) return -1;
      slot.set(deflated);
      return deflated.length;
    };
  }
  // A zlib failure (out of memory) reaches the stream's error handler, which destroys it.
  stream.on("error", () => {});
  return (entry, slot) => {
    // Room for the flushed blocks only, two bytes short of the entry, so that the final
    // block fits after them and a stream that fills the room (not shorter) is stored.
    const room = slot.length - finalBlock.length;
    if (room <= 0) return -1;
    handle.writeSync(zlib.constants.Z_FULL_FLUSH, entry, 0, entry.length, slot, 0, room);
    if (stream.destroyed) throw new Error("zlib failed while deflating an entry");
    const outLeft = state[0]!;
    const inLeft = state[1]!;
    // With no room left zlib may still hold output of this flush: the entry did not fit.
    if (inLeft !== 0 || outLeft === 0) {
      handle.reset(); // drops the entry's unfinished state; the next entry starts afresh
      return -1;
    }
    const length = room - outLeft;
    slot.set(finalBlock, length);
    return length + finalBlock.length;
  };
}

/** Deflates every entry of a batch with the engine of its level (made on first use). */
export function deflateBatch(zlib: Zlib, engines: Map<number, Engine>, request: BatchRequest): BatchReply {
  const { id, level, input, output, lengths } = request;
  let engine = engines.get(level);
  if (!engine) engines.set(level, (engine = makeEngine(zlib, level)));
  const sizes: number[] = [];
  const crcs: number[] = [];
  let at = 0;
  for (const length of lengths) {
    const entry = new Uint8Array(input, at, length);
    crcs.push(zlib.crc32(entry));
    sizes.push(engine(entry, new Uint8Array(output, at, length)));
    at += length;
  }
  return { id, ok: true, input, output, sizes, crcs };
}

/** The thread's program: answers each batch in one message, its buffers transferred back. */
export function threadMain(batch: typeof deflateBatch): void {
  const { parentPort } = process.getBuiltinModule("node:worker_threads");
  const zlib = process.getBuiltinModule("node:zlib");
  const port = parentPort!;
  const engines = new Map<number, Engine>();
  port.on("message", (request: BatchRequest) => {
    let reply: BatchReply;
    try {
      reply = batch(zlib, engines, request);
    } catch (error) {
      port.postMessage({ id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) } satisfies BatchReply);
      return;
    }
    if (reply.ok) port.postMessage(reply, [reply.input, reply.output]);
  });
}

/**
 * The source text a thread is started from. The thread runs plain JavaScript: started from a
 * .ts file it would load Node's type stripper first (measured: +30–35 MB resident per thread
 * without a compile cache, against ~19 MB). The functions' text here is already stripped.
 */
export const threadSource = `"use strict";
const makeEngine = ${makeEngine.toString()};
const deflateBatch = ${deflateBatch.toString()};
(${threadMain.toString()})(deflateBatch);
`;
