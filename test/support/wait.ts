/**
 * Waiting for behaviour instead of sleeping: `until` polls a predicate until it yields a
 * value, so a test waits exactly as long as the system needs, loaded or not. The timeout is
 * only a guard against hanging (generous: a busy CI machine is slow, not wrong); when it
 * fires, the error names what was awaited and the last value or error seen.
 */

export interface UntilOptions {
  /** Guard against hanging, not a speed claim (default 30 s). */
  timeoutMs?: number;
  /** What is awaited, for the error when the guard fires. */
  message?: string;
  /** Pause between polls (default 50 ms). */
  intervalMs?: number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves to the first truthy value `predicate` returns (a thrown error counts as "not
 * yet"); rejects when `timeoutMs` passes first.
 */
export async function until<T>(predicate: () => T | Promise<T>, options: UntilOptions = {}): Promise<Exclude<T, false | null | undefined | 0 | "">> {
  const { timeoutMs = 60_000, message = "a condition", intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as Exclude<T, false | null | undefined | 0 | "">;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${message} (last: ${seen})`);
    }
    await pause(intervalMs);
  }
}
