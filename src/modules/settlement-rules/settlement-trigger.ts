import { Knex } from 'knex';
import { toUnitsCeil, toUnitsFloor } from '../../platform/decimal';
import type { DepositListener, ChainTransferModel } from '../deposits';
import { heldByAml } from '../deposits';
import { assetsById } from '../chains';
import { txHashesSentAs } from '../withdrawals';

/**
 * Turns confirmed deposits into settlement-rule executions, inside the scan's transaction: one row
 * per (rule, deposit), the pair unique, so a rule fires at most once for a deposit however often the
 * deposit is seen (a rescan, a restart, two watchers). The worker does the sending.
 *
 * A deposit is settled once, by one rule: of the rules that match it, the oldest (created first)
 * takes it, and each other records a CANCELLED execution saying which rule settles the deposit. A
 * deposit that already has an execution not cancelled (one a reorg took back after it was sent)
 * gets no other.
 *
 * Matched: incoming deposits that are not Keel's own doing (not internal moves between the
 * organisation's wallets, not the output of one of Keel's swaps), to the rule's wallet (a master
 * rule: the master wallet's own address; an address rule: that address), on the source chain, of
 * one of the source assets (any when none are listed), within minAmount..maxAmount (whole units,
 * inclusive). Only rules active when the deposit is confirmed match. A deposit from a sanctioned
 * address (flagged by the AML screen earlier in the same transaction), and any deposit to an address
 * (a deposit address or the master wallet's own) holding one that no admin has released, triggers
 * nothing; an execution already recorded waits while its address is held (SettlementExecutor).
 *
 * A reorg that takes a deposit back cancels its executions still pending; an execution already
 * sent stays sent (the funds have left) and is marked depositRevertedAt. If the same transfer is
 * confirmed again on the new fork, a cancelled execution becomes pending again: still once.
 */
export class SettlementTrigger implements DepositListener {
  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    const incoming = deposits.filter((d) => d.direction === 'incoming' && d.category !== 'internal' && !d.amlFlaggedAt);
    // Keyed by the receiving wallet: a deposit address, or the master wallet's own address.
    const receivers = new Map(incoming.map((d) => [d.addressId ?? d.masterWalletId, d]));
    const held = new Set<string>();
    for (const [walletId, d] of receivers) if (await heldByAml(trx, d)) held.add(walletId);
    const candidates = incoming.filter((d) => !held.has(d.addressId ?? d.masterWalletId));
    if (!candidates.length) return;
    const rules: Record<string, any>[] = await trx('settlement_rules')
      .whereIn('masterWalletId', [...new Set(candidates.map((d) => d.masterWalletId))])
      .where({ isActive: true })
      .whereNull('deletedAt')
      .orderBy([{ column: 'createdAt' }, { column: 'id' }]);
    if (!rules.length) return;
    const ownSwaps = await txHashesSentAs(trx, 'swap', candidates.map((d) => d.txHash));
    const live: { chainTransferId: string }[] = await trx('settlement_rule_executions').whereIn('chainTransferId', candidates.map((d) => d.id)).whereNot({ status: 'CANCELLED' }).select('chainTransferId');
    const settling = new Set(live.map((e) => e.chainTransferId));
    const decimals = new Map<string, number>((await assetsById(trx, candidates.map((d) => d.assetId))).map((a) => [a.id, a.decimals]));
    const rows = [];
    for (const d of candidates) {
      if (ownSwaps.has(d.txHash) || settling.has(d.id)) continue;
      const [first, ...others] = rules.filter((rule) => matches(rule, d, decimals.get(d.assetId) ?? 18));
      if (!first) continue;
      const row = (rule: Record<string, any>) => ({ organizationId: d.organizationId, ruleId: rule.id, chainTransferId: d.id, assetId: d.assetId, rawAmount: d.rawValue, runAfter: new Date(Date.now() + rule.delaySeconds * 1000) });
      rows.push({ ...row(first), status: 'PENDING', error: null });
      const settledBy = `not executed: the deposit is settled by the older rule "${first.name}" (${first.id}), which also matches it; a deposit is settled by one rule only`;
      for (const rule of others) rows.push({ ...row(rule), status: 'CANCELLED', error: settledBy });
    }
    if (!rows.length) return;
    await trx('settlement_rule_executions')
      .insert(rows)
      .onConflict(['rule_id', 'chain_transfer_id'])
      // Decided again only if a reorg cancelled it before it ran (pending, or the other rule's); otherwise the first execution stands.
      .merge({ status: trx.raw('excluded.status'), runAfter: trx.fn.now(), error: trx.raw('excluded.error'), depositRevertedAt: null, updatedAt: trx.fn.now() })
      .where('settlement_rule_executions.status', 'CANCELLED')
      .whereNotNull('settlement_rule_executions.depositRevertedAt');
  }

  async reverted(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    const ids = deposits.map((d) => d.id);
    if (!ids.length) return;
    await trx('settlement_rule_executions')
      .whereIn('chainTransferId', ids)
      .where({ status: 'PENDING' })
      .update({ status: 'CANCELLED', error: 'the deposit was taken back by a chain reorganisation before the rule executed', depositRevertedAt: trx.fn.now(), updatedAt: trx.fn.now() });
    await trx('settlement_rule_executions').whereIn('chainTransferId', ids).whereNot({ status: 'CANCELLED' }).update({ depositRevertedAt: trx.fn.now(), updatedAt: trx.fn.now() });
  }
}

function matches(rule: Record<string, any>, d: ChainTransferModel, decimals: number): boolean {
  if ((rule.addressId ?? null) !== (d.addressId ?? null)) return false;
  if (rule.sourceBlockchainId !== d.blockchainId) return false;
  const assetIds: string[] = rule.sourceAssetIds ?? [];
  if (assetIds.length && !assetIds.includes(d.assetId)) return false;
  const raw = BigInt(d.rawValue);
  // Both bounds inclusive, finer than the asset's base unit too: the least amount at or above the
  // minimum (rounded up) to the greatest at or below the maximum (rounded down).
  if (rule.minAmount !== null && raw < toUnitsCeil(String(rule.minAmount), decimals)) return false;
  if (rule.maxAmount !== null && raw > toUnitsFloor(String(rule.maxAmount), decimals)) return false;
  return true;
}
