import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { ChainNetwork } from '../chains/chain-networks';
import { forEachBounded } from '../../platform/bounded';
import { OPEN_ITEM_STATUSES } from '../withdrawals/transfer.domain';
import { NATIVE_TOKEN, settlementInterface } from './settlement-contract';
import { unsettledDeltas } from './unsettled-trades';
import { walletAccounts } from './wallet-accounts';

const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);
/** Wallet balances read from the node at once (each reads two): enough to be quick, few enough not to flood the node. */
const RPC_CONCURRENCY = 8;

/** One wallet's balance of one asset, as the ledger says it should be on chain and as it is. Base units. */
export interface ReconcileLine {
  blockchainId: string;
  organizationId: string;
  walletId: string;
  address: string;
  assetId: string;
  symbol: string;
  /** available + locked in the ledger. */
  ledger: string;
  /** Trades not yet settled (ledger moved, chain not yet), net. */
  unsettled: string;
  /** Transfers out already taken from the ledger and not yet mined. */
  outgoing: string;
  /** Owed after a reorg took back a spent deposit. */
  debt: string;
  /** ledger − unsettled + outgoing − debt. */
  expected: string;
  wallet: string;
  contract: string;
  /** wallet + contract − expected. */
  difference: string;
}

export interface ReconcileReport {
  blockchainId: string;
  contract: string | null;
  checked: number;
  differences: ReconcileLine[];
}

export interface ReconcileOptions {
  /** Only the wallets of this organisation. */
  organizationId?: string;
  /** Hears the count of wallet-asset lines read from the chain so far, of `total`. */
  onProgress?: (checked: number, total: number) => void;
}

/**
 * Every wallet's balance per asset on chain (its address plus its balance in the settlement
 * contract) against the ledger, allowing for what is legitimately in flight: trades not yet
 * settled, transfers out not yet mined, and debts a reorg left.
 */
export async function reconcileChain(db: Knex, network: ChainNetwork, contractAddress: string | null, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
  const blockchainId = network.blockchainId;
  const assets = new Map<string, { id: string; symbol: string; address: string; isNative: boolean }>(
    (await db('assets').where({ blockchainId }).select('id', 'symbol', 'address', 'isNative')).map((a: { id: string; symbol: string; address: string; isNative: boolean }) => [a.id, a]),
  );
  const ids = [...assets.keys()];
  const lines = new Map<string, { walletId: string; assetId: string; ledger: bigint; unsettled: bigint; outgoing: bigint; debt: bigint }>();
  const line = (walletId: string, assetId: string) => {
    const key = `${walletId}|${assetId}`;
    let l = lines.get(key);
    if (!l) lines.set(key, (l = { walletId, assetId, ledger: 0n, unsettled: 0n, outgoing: 0n, debt: 0n }));
    return l;
  };
  const org = (q: Knex.QueryBuilder, column: string) => (opts.organizationId ? q.where(column, opts.organizationId) : q);
  for (const r of await org(db('ledger_balances').whereIn('assetId', ids).select('walletId', 'assetId', db.raw('(available + locked)::text AS total')), 'organizationId')) line(r.walletId, r.assetId).ledger = BigInt(r.total);
  for (const r of await org(db('wallet_debts').whereIn('assetId', ids).select('walletId', 'assetId', db.raw('amount::text AS amount')), 'organizationId')) line(r.walletId, r.assetId).debt = BigInt(r.amount);
  const open = await org(
    db('transfer_items as i')
      .join('transfers as t', 't.id', 'i.transferId')
      .where('t.blockchainId', blockchainId)
      .whereIn('i.status', OPEN_ITEM_STATUSES)
      .groupByRaw('coalesce(t.address_id, t.master_wallet_id), i.asset_id')
      .select(db.raw('coalesce(t.address_id, t.master_wallet_id) AS "walletId"'), 'i.assetId', db.raw('sum(i.raw_amount)::text AS total')),
    't.organizationId',
  );
  for (const r of open) line(r.walletId, r.assetId).outgoing = BigInt(r.total);
  const unsettled = await unsettledDeltas(db, { blockchainId });
  const accounts = await walletAccounts(db, [...new Set([...lines.values()].map((l) => l.walletId).concat([...unsettled.keys()].map((k) => k.split('|')[0])))]);
  for (const [key, amount] of unsettled) {
    const [walletId, assetId] = key.split('|');
    if (opts.organizationId && accounts.get(walletId)?.organizationId !== opts.organizationId) continue;
    line(walletId, assetId).unsettled = amount;
  }

  const contract = contractAddress ? new ethers.Contract(contractAddress, settlementInterface(), network.provider) : null;
  const differences: ReconcileLine[] = [];
  const checks = [...lines.values()].filter((l) => accounts.has(l.walletId));
  let read = 0;
  await forEachBounded(checks, RPC_CONCURRENCY, async (l) => {
    const account = accounts.get(l.walletId)!;
    const asset = assets.get(l.assetId)!;
    const token = asset.isNative ? NATIVE_TOKEN : ethers.getAddress(asset.address);
    const [wallet, held] = await Promise.all([
      asset.isNative ? network.provider.getBalance(account.address) : (new ethers.Contract(token, erc20, network.provider).balanceOf(account.address) as Promise<bigint>),
      contract ? (contract.balanceOf(token, account.address) as Promise<bigint>) : Promise.resolve(0n),
    ]);
    opts.onProgress?.(++read, checks.length);
    const expected = l.ledger - l.unsettled + l.outgoing - l.debt;
    const difference = wallet + held - expected;
    if (difference === 0n) return;
    differences.push({
      blockchainId,
      organizationId: account.organizationId,
      walletId: l.walletId,
      address: account.address,
      assetId: l.assetId,
      symbol: asset.symbol,
      ledger: l.ledger.toString(),
      unsettled: l.unsettled.toString(),
      outgoing: l.outgoing.toString(),
      debt: l.debt.toString(),
      expected: expected.toString(),
      wallet: wallet.toString(),
      contract: held.toString(),
      difference: difference.toString(),
    });
  });
  differences.sort((a, b) => (a.walletId + a.assetId < b.walletId + b.assetId ? -1 : 1));
  return { blockchainId, contract: contractAddress, checked: checks.length, differences };
}
