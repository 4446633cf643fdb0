/**
 * Packs many small writes (headers, small entries) into fixed-size blocks, so that a stream of
 * 10,000 entries becomes a few hundred 64 KiB chunks instead of 30,000 tiny ones: every chunk
 * costs a stream push and, downstream, a write call, and that per-chunk cost is what makes
 * archivers slow on many small files.
 */
export class ChunkBatcher {
  private readonly blockSize: number;
  private block: Buffer;
  private used = 0;
  private full: Buffer[] = [];
  /** Bytes written so far (the current archive offset). */
  written = 0;

  constructor(blockSize = 64 * 1024) {
    this.blockSize = blockSize;
    this.block = Buffer.allocUnsafe(blockSize);
  }

  /**
   * Appends bytes. A chunk at least a block long that the caller will not touch again
   * (`owned`) is passed through without a copy.
   */
  write(data: Buffer, owned = false): void {
    this.written += data.length;
    if (owned && data.length >= this.blockSize) {
      this.closeBlock();
      this.full.push(data);
      return;
    }
    let from = 0;
    while (from < data.length) {
      const n = Math.min(data.length - from, this.blockSize - this.used);
      data.copy(this.block, this.used, from, from + n);
      this.used += n;
      from += n;
      if (this.used === this.blockSize) this.closeBlock();
    }
  }

  /** Whether whole blocks are waiting to be taken. */
  get ready(): boolean {
    return this.full.length > 0;
  }

  /** Takes the completed blocks (and, with `all`, the partial one too). */
  take(all = false): Buffer[] {
    if (all) this.closeBlock();
    const out = this.full;
    this.full = [];
    return out;
  }

  private closeBlock(): void {
    if (this.used === 0) return;
    this.full.push(this.used === this.blockSize ? this.block : this.block.subarray(0, this.used));
    // A fresh block: the one just closed now belongs to the consumer.
    this.block = Buffer.allocUnsafe(this.blockSize);
    this.used = 0;
  }
}
