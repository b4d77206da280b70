import type { Logger } from '../../platform/logger';
import { startPollingLoop } from '../../platform/polling-loop';
import type { Worker } from '../../platform/worker';
import type { SanctionsLists } from './sanctions-lists';
import type { SanctionsScreen, SanctionsSnapshot } from './sanctions-screen';

/**
 * Every process screens in memory, so each watches PostgreSQL for a list loaded with
 * `keel aml load` (every SANCTIONS_REFRESH_INTERVAL_MS) and swaps it in. The first check runs
 * before start() returns, so a process never serves on an older list than the one loaded.
 */
export class SanctionsListWatcher implements Worker {
  private loop?: { stop(): Promise<void> };
  private inUse: string | null = null;

  constructor(
    private readonly lists: SanctionsLists,
    private readonly screen: SanctionsScreen,
    private readonly shipped: SanctionsSnapshot,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.check();
    this.loop = startPollingLoop(
      () => this.check(),
      this.intervalMs,
      (e) => this.logger.warn({ err: e }, 'reading the sanctions lists failed; screening goes on with the lists in use'),
    );
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** Swaps in a newer loaded list if there is one. */
  async check(): Promise<void> {
    const before = this.inUse;
    this.inUse = await this.lists.refresh(this.screen, this.shipped, this.inUse);
    if (this.inUse !== before) {
      const info = this.screen.info();
      this.logger.info({ source: info.source, listDate: info.listDate, addresses: info.addressCount }, 'sanctions lists in use');
    }
  }
}
