/** Polls until `check` returns a truthy value or the time runs out. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
