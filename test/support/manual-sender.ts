import type { Keel } from '../../src/app';
import type { ChainNetworks } from '../../src/modules/chains/chain-networks';
import { TransactionSender, type TransactionSenderOptions } from '../../src/modules/withdrawals/transaction-sender';

/**
 * A transaction sender as another worker would run it, for tests that tick it themselves (start
 * Keel with a long TRANSFER_POLL_INTERVAL_MS so its own stays out of the way); `networks` may stand
 * in for the chains' nodes; `options` (a fee bump at once, say) override the defaults.
 */
export function manualSender(keel: Keel, networks: ChainNetworks = keel.services.networks, options: Partial<TransactionSenderOptions> = {}): TransactionSender {
  const { services, platform } = keel;
  const sender = new TransactionSender(platform.db, platform.outbox, networks, services.chains, services.sendingWallets, { pollIntervalMs: 50, bumpAfterMs: 600_000, bumpPercent: 25, ...options }, platform.logger);
  sender.onOutcome(services.custodyLedgerSync);
  return sender;
}
