import type { SettlementView } from '../ledger';
import type { SettlementDeployments } from './settlement-deployments';

/**
 * What settlement tells the ledger's custody side: a transfer from the chain's settlement contract
 * is a withdrawal from trading paid out to the wallet (credited to custody by that withdrawal when
 * it is confirmed), not a deposit to credit again.
 */
export class SettlementLedgerView implements SettlementView {
  constructor(private readonly deployments: SettlementDeployments) {}

  async isInternalSource(blockchainId: string, fromAddress: string): Promise<boolean> {
    const address = await this.deployments.address(blockchainId);
    return !!address && address.toLowerCase() === fromAddress.toLowerCase();
  }
}
