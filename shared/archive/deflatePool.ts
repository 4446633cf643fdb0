/**
 * Deflates many small independent inputs on a few long-lived zlib streams instead of one
 * zlib instance per input. `zlib.deflateRawSync` per entry allocates a stream object, a 16 KiB
 * output buffer and ~300 KiB of native state each time; over 10,000 entries that churn made
 * V8 grow its heap and resident memory with the file count. Here every input is written with
 * Z_FULL_FLUSH, which ends the current block and forgets the history, so each input's output
 * is a self-contained run of blocks; appending an empty final block (the technique pigz uses
 * for parallel deflate) makes it a complete raw deflate stream for one ZIP entry. The
 * compression itself runs on libuv's thread pool, beside the thread building the archive.
 */
import zlib, { type DeflateRaw } from "node:zlib";

/** An empty fixed-Huffman block with BFINAL set: bits 1, 01, 0000000, on a byte boundary. */
const finalBlock = Buffer.from([0x03, 0x00]);

export class DeflatePool {
  private readonly streams: DeflateRaw[];
  private turn = 0;

  /** `size` streams (≤ the libuv thread pool, which file I/O shares) at deflate `level`. */
  constructor(level: number, size: number) {
    this.streams = Array.from({ length: size }, () =>
      // zlib passes its options on to Transform; @types/node only lists zlib's own.
      zlib.createDeflateRaw({
        level,
        flush: zlib.constants.Z_FULL_FLUSH,
        // One input's output must fit, so the stream never waits for a read before calling back.
        readableHighWaterMark: 4 * 1024 * 1024,
      } as zlib.ZlibOptions),
    );
  }

  /**
   * Resolves with the raw deflate stream of `data` (non-empty; it must not change until then).
   * Inputs given to the same stream are processed in order; results are independent.
   */
  deflate(data: Buffer): Promise<Buffer> {
    const stream = this.streams[this.turn++ % this.streams.length]!;
    return new Promise((resolve, reject) => {
      stream.write(data, (error) => {
        if (error) return reject(error);
        // zlib pushes a write's output before calling its callback, and starts the next
        // queued write on the thread pool only afterwards, so the buffer holds exactly ours.
        const output = stream.read() as Buffer | null;
        // A full flush always emits at least an empty stored block; nothing means a broken stream.
        if (!output) return reject(new Error("zlib returned no output for a full flush"));
        resolve(Buffer.concat([output, finalBlock], output.length + finalBlock.length));
      });
    });
  }

  /** Frees the zlib streams; pending results are abandoned. */
  close(): void {
    for (const stream of this.streams) stream.destroy();
  }
}
