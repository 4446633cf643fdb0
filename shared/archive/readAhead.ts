/**
 * Read-ahead of lazy entry contents: while the writer deflates and writes one entry, the
 * contents of the next few are already being fetched (files, storage), concurrently. Content
 * started for entries the writer never reaches (the archive failed or was abandoned) is let go.
 */
import { Readable } from "node:stream";
import type { ZipContent, ZipEntryInput } from "./zipWriter.ts";

/** An entry whose lazy content may already be loading. */
export interface Prefetched {
  input: ZipEntryInput;
  content: ZipContent | Promise<ZipContent>;
}

/**
 * Passes entries through in order, calling each lazy `content` function `depth` entries before
 * the writer reaches it. Content started for entries never reached (the archive failed or was
 * abandoned) is released: streams are destroyed, errors swallowed.
 */
export async function* readAhead(entries: Iterable<ZipEntryInput> | AsyncIterable<ZipEntryInput>, depth: number): AsyncGenerator<Prefetched> {
  const window: Prefetched[] = [];
  const start = (input: ZipEntryInput): Prefetched => {
    if (typeof input.content !== "function") return { input, content: input.content };
    const loading = Promise.resolve().then(input.content);
    loading.catch(() => {}); // rejections are rethrown where the writer awaits the content
    return { input, content: loading };
  };
  try {
    for await (const input of entries) {
      window.push(start(input));
      if (window.length > depth) yield window.shift()!;
    }
    while (window.length) yield window.shift()!;
  } finally {
    for (const { content } of window) release(content);
  }
}

/** Lets go of content that will not be written: a stream is destroyed (closing its file). */
export function release(content: ZipContent | Promise<ZipContent>): void {
  void Promise.resolve(content).then(
    (value) => value instanceof Readable && value.destroy(),
    () => {},
  );
}
