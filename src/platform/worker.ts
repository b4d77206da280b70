/**
 * Background work a process runs for its roles (the outbox relay, polling loops, the chains it
 * started): started once, stopped once on shutdown; stop() waits for work in progress.
 */
export interface Worker {
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

/** A worker around a start function that hands back its stop handle (a polling loop). */
export function loopWorker(start: () => { stop(): Promise<void> }): Worker {
  let loop: { stop(): Promise<void> } | undefined;
  return {
    start() {
      loop = start();
    },
    async stop() {
      await loop?.stop();
      loop = undefined;
    },
  };
}

/**
 * Workers stopped in the reverse order of their start, so each stops before what it was started on.
 * A worker whose start failed is stopped too, so whatever it opened before failing is closed.
 */
export class Workers {
  private readonly started: Worker[] = [];

  async start(worker: Worker): Promise<void> {
    this.started.push(worker);
    await worker.start();
  }

  async stopAll(): Promise<void> {
    for (let worker = this.started.pop(); worker; worker = this.started.pop()) await worker.stop();
  }
}
