/**
 * Waits for a condition that another process makes true: polls `check` every `intervalMs`
 * until it returns a truthy value, and returns it with the time it took. The ceiling only
 * guards against hanging; it is not what a test asserts.
 */
export async function until<T>(check: () => Promise<T | undefined | null | false>, options: { ceilingMs?: number; intervalMs?: number; what?: string } = {}): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  const ceiling = options.ceilingMs ?? 10_000;
  for (;;) {
    const value = await check();
    if (value) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > ceiling) throw new Error(`gave up waiting${options.what ? ` for ${options.what}` : ""} after ${ceiling} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}
