/** A dependency that did not answer within its bound (Redis paused, PostgreSQL unreachable). */
export class DependencyTimeout extends Error {
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'DependencyTimeout';
  }
}

/** Settles as `work` does, or rejects with DependencyTimeout after `ms`; `work` itself is not cancelled. */
export function withinMs<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DependencyTimeout(what, ms)), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
