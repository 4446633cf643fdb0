/**
 * A bounded pool of workers over a (possibly streamed) list: `size` slots pull the next
 * item when they finish the previous one, so a slow file does not hold the others back.
 * The first failure stops every slot from taking more work and is rethrown once all have
 * stopped, so no upload is still running when the caller cleans up.
 */

/** Runs `work(item, slot)` for every item with at most `size` running at once. */
export async function runPool<T>(
  items: AsyncIterable<T> | Iterable<T>,
  size: number,
  work: (item: T, slot: number) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const iterator = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : toAsync(items[Symbol.iterator]());
  let failure: { error: unknown } | undefined;
  // Async generators queue concurrent next() calls, but plain async iterators need not:
  // one pull at a time keeps both correct.
  let pulling: Promise<unknown> = Promise.resolve();
  const next = (): Promise<IteratorResult<T>> => {
    const result = pulling.then(() => iterator.next());
    pulling = result.catch(() => undefined);
    return result;
  };
  const slot = async (index: number) => {
    while (!failure) {
      if (signal?.aborted) throw signal.reason;
      const step = await next();
      if (step.done || failure) return;
      await work(step.value, index);
    }
  };
  const slots = Array.from({ length: Math.max(1, size) }, (_, index) =>
    slot(index).catch((error: unknown) => {
      failure ??= { error };
    }),
  );
  await Promise.all(slots);
  if (failure) {
    await iterator.return?.();
    throw failure.error;
  }
}

async function* toAsyncGen<T>(iterator: Iterator<T>): AsyncGenerator<T> {
  for (let step = iterator.next(); !step.done; step = iterator.next()) yield step.value;
}

function toAsync<T>(iterator: Iterator<T>): AsyncIterator<T> {
  return toAsyncGen(iterator);
}
