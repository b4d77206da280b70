import { Knex } from 'knex';
import { formatScaled } from '../../platform/decimal';
import type { PublishInput } from '../../platform/events/outbox';
import type { ChainService } from '../chains';
import { chainTransferById } from '../deposits';
import type { SendingWallets } from '../wallets';
import { ruleEventPrefix, ruleView } from './settlement-rule.service';

export interface ExecutionOutcome {
  outcome: 'executed' | 'failed';
  txHash: string | null;
  error: string | null;
  /** For a failure: whether the worker will try again (and when). */
  nextAttemptAt?: Date | null;
}

/**
 * *_settlement_rule.executed / .failed for one execution, with the spec's data (ruleId, ruleName,
 * order, slippageTolerance, source, destination, wallet, blockchain, txhash, amount, asset) and
 * Keel's own additions (executionId, the deposit, the kind, the swap, attempts and the error).
 */
export async function executionEvent(trx: Knex.Transaction, chains: ChainService, wallets: SendingWallets, execution: Record<string, any>, outcome: ExecutionOutcome): Promise<PublishInput<Record<string, unknown>>> {
  const ruleRow = await trx('settlement_rules').where({ id: execution.ruleId }).first();
  const rule = ruleView(ruleRow);
  const deposit = await chainTransferById(trx, execution.chainTransferId);
  const [asset, chain] = await Promise.all([chains.assetRow(execution.assetId), chains.blockchainRow(rule.source.blockchainId)]);
  const wallet = await wallets.resolve(ruleRow.organizationId, rule.addressId ? { addressId: rule.addressId } : { masterWalletId: rule.masterWalletId }, trx).catch(() => null);
  const sourceAssets = rule.source.assetIds.length ? rule.source.assetIds : [execution.assetId];
  return {
    organizationId: ruleRow.organizationId,
    type: `${ruleEventPrefix(rule.addressId)}.${outcome.outcome}`,
    data: {
      ruleId: rule.id,
      ruleName: rule.name,
      order: rule.order,
      slippageTolerance: rule.slippageTolerance,
      source: sourceAssets.map((assetId) => ({ assetId, minAmount: rule.source.minAmount, maxAmount: rule.source.maxAmount })),
      destination: { assetId: rule.destination.assetId, address: rule.destination.address },
      wallet: { id: rule.walletId, name: wallet?.name ?? null },
      blockchain: { id: chain.id, name: chain.name },
      txhash: outcome.txHash ?? '',
      amount: formatScaled(BigInt(execution.rawAmount), asset!.decimals),
      asset: { id: asset!.id, symbol: asset!.symbol },
      executionId: execution.id,
      depositId: execution.chainTransferId,
      depositTxHash: deposit?.txHash ?? null,
      kind: execution.kind,
      swapId: execution.swapId ?? null,
      attempts: execution.attempts,
      error: outcome.error,
      nextAttemptAt: outcome.nextAttemptAt ?? null,
    },
  };
}
