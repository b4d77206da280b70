import type { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import { flagDeposit, type DepositListener, type ChainTransferModel } from '../deposits';
import type { SanctionsScreen } from './sanctions-screen';

/**
 * Screens the senders of every confirmed deposit (its from address and, on Solana, every other
 * account the asset left in the transaction), in the transaction that records it: a deposit
 * from a sanctioned address is flagged on its chain transfer (aml_flagged_at, aml_matches), raises
 * `address.incoming_transfer_flagged` / `master.incoming_transfer_flagged`, and (the flag being
 * set on the model before the auto-sweeper sees it) holds its address from auto-sweep.
 * Registered before the other deposit listeners.
 */
export class SanctionedDepositFlagger implements DepositListener {
  constructor(
    private readonly screen: SanctionsScreen,
    private readonly outbox: Outbox,
  ) {}

  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    const flagged = deposits.filter((d) => d.direction === 'incoming' && d.category !== 'internal' && sendersOf(d).some((a) => this.screen.isSanctioned(a)));
    if (!flagged.length) return;
    const listDate = this.screen.info().listDate;
    for (const d of flagged) {
      const matches = sendersOf(d).flatMap((a) => this.screen.screen(a).matches);
      d.amlFlaggedAt = await flagDeposit(trx, d.id, matches);
      d.amlMatches = matches;
    }
    await this.outbox.publishMany(
      trx,
      flagged.map((d) => ({
        organizationId: d.organizationId,
        type: `${d.addressId ? 'address' : 'master'}.incoming_transfer_flagged`,
        data: {
          id: d.id,
          hash: d.txHash,
          logIndex: d.logIndex,
          blockNumber: String(d.blockNumber),
          from: d.fromAddress,
          to: d.toAddress,
          rawValue: d.rawValue,
          assetId: d.assetId,
          blockchainId: d.blockchainId,
          wallet: { id: d.addressId ?? d.masterWalletId, walletAddress: d.toAddress, masterWalletId: d.masterWalletId },
          matches: d.amlMatches,
          listDate,
          heldFromAutoSweep: true,
        },
      })),
    );
  }

  async reverted(): Promise<void> {
    // The flag stays on the (now REVERTED) record: the sender was sanctioned all the same.
  }
}

/** Every sender of a deposit: on Solana a transaction may move the asset out of several accounts. */
const sendersOf = (d: ChainTransferModel): string[] => [d.fromAddress, ...(d.alsoFrom ?? [])].filter(Boolean);
