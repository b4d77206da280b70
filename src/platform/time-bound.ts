/** A dependency that did not answer within its bound (Redis paused, PostgreSQL unreachable). */
export class DependencyTimeout extends Error {
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'DependencyTimeout';
  }
}

/** Settles as `work` does, or rejects with DependencyTimeout after `ms`; `work` itself is not cancelled. */
export function withinMs<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  // One promise and one timer, with no race or finally of its own: this runs on every request.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DependencyTimeout(what, ms)), ms);
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
