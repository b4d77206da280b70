import { Knex } from 'knex';
import type { SettlementView } from '../ledger/custody-ledger-sync';
import type { SettlementDeployments } from './settlement-deployments';
import { unsettledDeltas } from './unsettled-trades';

/**
 * What settlement tells the ledger's custody side: a transfer from the chain's settlement contract
 * hands a wallet back its own funds (not a deposit to credit), and proceeds of trades not yet
 * CONFIRMED on chain are withheld from what a wallet may withdraw.
 */
export class SettlementLedgerView implements SettlementView {
  constructor(private readonly deployments: SettlementDeployments) {}

  async isInternalSource(blockchainId: string, fromAddress: string): Promise<boolean> {
    const address = await this.deployments.address(blockchainId);
    return !!address && address.toLowerCase() === fromAddress.toLowerCase();
  }

  async withheld(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint> {
    const net = (await unsettledDeltas(trx, { walletId, assetId })).get(`${walletId}|${assetId}`) ?? 0n;
    return net > 0n ? net : 0n;
  }
}
