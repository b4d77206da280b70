import type { Config } from './config';
import type { Logger } from './logger';

/**
 * A test hook for crash tests (KEEL_FAILPOINTS, sandbox only; production refuses to start with
 * it): `after-commit:<name>` kills this process with SIGKILL right after the unit of work `<name>`
 * commits, before anything answers the request, the window a crash-safe design must survive.
 * `stop-<point>` instead stops the process (SIGSTOP) the first time it reaches `<point>`, e.g.
 * `stop-before-commit:order.commit`: a stalled leader that a test resumes with SIGCONT later.
 * `throw-<point>` throws FailpointCrash the first time `<point>` is reached: for a test that runs
 * Keel in its own process, the step ends there as if the process had died (nothing after it runs).
 */
/** What a `throw-` failpoint throws: the process "died" at `point`. */
export class FailpointCrash extends Error {
  constructor(readonly point: string) {
    super(`failpoint ${point}: simulated crash`);
  }
}

export class Failpoints {
  private constructor(
    private readonly armed: Set<string>,
    private readonly logger: Logger,
  ) {}

  static fromConfig(config: Pick<Config, 'KEEL_ENV' | 'KEEL_FAILPOINTS'>, logger: Logger): Failpoints {
    const names = config.KEEL_ENV === 'sandbox' ? config.KEEL_FAILPOINTS.split(',').map((s) => s.trim()).filter(Boolean) : [];
    if (names.length) logger.warn({ failpoints: names }, 'KEEL_FAILPOINTS is set: this process kills itself at these points (a test hook)');
    return new Failpoints(new Set(names), logger);
  }

  static none(logger: Logger): Failpoints {
    return new Failpoints(new Set(), logger);
  }

  hit(point: string): void {
    if (this.armed.delete(`stop-${point}`)) {
      this.logger.fatal({ failpoint: `stop-${point}` }, 'failpoint reached: stopping the process (SIGSTOP)');
      process.kill(process.pid, 'SIGSTOP');
      return;
    }
    if (this.armed.delete(`throw-${point}`)) {
      this.logger.fatal({ failpoint: `throw-${point}` }, 'failpoint reached: the step ends here');
      throw new FailpointCrash(point);
    }
    if (!this.armed.has(point)) return;
    this.logger.fatal({ failpoint: point }, 'failpoint reached: killing the process');
    process.kill(process.pid, 'SIGKILL');
  }
}
