import { Knex } from 'knex';
import { ethers } from 'ethers';
import { assetsOfChain, type ChainNetwork } from '../chains';
import { balanceTotals, walletDebtsOf, type LedgerAccount } from '../ledger';
import { forEachBounded } from '../../platform/bounded';
import { openItemsOnChain } from '../withdrawals';
import { NATIVE_TOKEN, settlementInterface } from './settlement-contract';
import { deltasToSettle } from './unsettled-trades';
import { payoutHolder } from './trading-withdrawal-sender';
import { walletAccounts } from '../wallets';

const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);
/** Balances read from the node at once: enough to be quick, few enough not to flood the node. */
const RPC_CONCURRENCY = 8;

/**
 * One wallet's balance of one asset in one ledger account, as the ledger says the chain should hold
 * it and as the chain does: 'custody' against the wallet's address, 'trading' against its balance
 * in the settlement contract. Base units.
 */
export interface ReconcileLine {
  blockchainId: string;
  organizationId: string;
  walletId: string;
  address: string;
  assetId: string;
  symbol: string;
  account: LedgerAccount;
  /** available + locked in the ledger account. */
  ledger: string;
  /** trading: trades still to settle at the block read (the ledger moved, the contract not yet), net; a FAILED trade is not among them. */
  unsettled: string;
  /**
   * custody: transfers out (trading deposits included) taken from the ledger and not mined by the block read, less the gas of
   * those mined (charged when the line is final), plus payouts from trading paid to the address and not yet CONFIRMED (credited then);
   * trading: withdrawals taken and not yet paid out, plus deposits mined and not yet credited.
   */
  inFlight: string;
  /** Owed by this account after a reorg took back a credit already spent (custody: a deposit, a payout to the address; trading: a reverted payout's refund). */
  debt: string;
  /** ledger − unsettled + inFlight − debt. */
  expected: string;
  /** The address's balance (custody) or the contract's balanceOf (trading), at the block read. */
  onChain: string;
  /** onChain − expected. */
  difference: string;
}

export interface ReconcileReport {
  blockchainId: string;
  contract: string | null;
  /** The block every balance was read at: a settled batch boundary (batches mined by it count as settled). */
  blockNumber: number;
  checked: number;
  differences: ReconcileLine[];
}

export interface ReconcileOptions {
  /** Only the wallets of this organisation. */
  organizationId?: string;
  /** Hears the count of wallet-asset lines read from the chain so far, of `total`. */
  onProgress?: (checked: number, total: number) => void;
}

interface Tally {
  walletId: string;
  assetId: string;
  account: LedgerAccount;
  ledger: bigint;
  unsettled: bigint;
  inFlight: bigint;
  debt: bigint;
}

/**
 * Every wallet's ledger per asset against the chain, read at one block: its custody account against
 * its address, and its trading account against its balance in the settlement contract (Ledger =
 * contract), allowing for what is legitimately in flight: trades still to settle, transfers out
 * not yet mined, withdrawals from trading not yet paid out or paid and not yet credited, debts a reorg left. The block is a
 * settled batch boundary: a batch whose transaction is mined by then counts as settled, whatever
 * its confirmations, so a batch between its receipt and CONFIRMED is no difference.
 */
export async function reconcileChain(db: Knex, network: ChainNetwork, contractAddress: string | null, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
  const blockchainId = network.blockchainId;
  const provider = network.provider;
  const blockTag = await provider.getBlockNumber();
  /** The receipt of whichever of these transactions was mined by the block read, if one was. */
  const minedBy = async (hashes: (string | null | undefined)[]): Promise<ethers.TransactionReceipt | null> => {
    for (const hash of hashes) {
      if (!hash) continue;
      const r = await provider.getTransactionReceipt(hash);
      if (r && r.blockNumber <= blockTag) return r;
    }
    return null;
  };
  /** Whether any of the transactions signed at one nonce (fee bumps re-sign it) paid by the block read. */
  const paid = async (t: { txHash: string | null; replacedTxHashes: string[] | null }) => (await minedBy([t.txHash, ...(t.replacedTxHashes ?? [])]))?.status === 1;
  // One snapshot of the ledger (repeatable read): a line that moves on meanwhile is seen before or after, never half.
  const { assets, tallies, accounts } = await db.transaction(
    async (trx) => {
      const settledBatches: string[] = [];
      for (const b of await trx('settlement_batches').where({ blockchainId, status: 'SUBMITTED' }).select('id', 'txHash', 'replacedTxHashes')) if (await paid(b)) settledBatches.push(b.id);
      const paidOut = new Map<string, Record<string, any>>();
      for (const w of await trx('tradingTransfers')
        .where({ blockchainId, direction: 'WITHDRAWAL', status: 'SUBMITTED' })
        .select('id', 'txHash', 'replacedTxHashes', 'blockchainId', 'organizationId', 'walletId', 'walletAddress', 'recipient', 'assetId', 'rawAmount'))
        if (await paid(w)) paidOut.set(w.id, w);

      const assets = new Map<string, { id: string; symbol: string; address: string; isNative: boolean }>(
        (await assetsOfChain(trx, blockchainId)).map((a) => [a.id, a]),
      );
      const native = [...assets.values()].find((a) => a.isNative);
      const ids = [...assets.keys()];
      const tallies = new Map<string, Tally>();
      const tally = (walletId: string, assetId: string, account: LedgerAccount) => {
        const key = `${walletId}|${assetId}|${account}`;
        let t = tallies.get(key);
        if (!t) tallies.set(key, (t = { walletId, assetId, account, ledger: 0n, unsettled: 0n, inFlight: 0n, debt: 0n }));
        return t;
      };
      const org = (q: Knex.QueryBuilder, column: string) => (opts.organizationId ? q.where(column, opts.organizationId) : q);
      for (const r of await balanceTotals(trx, ids, { organizationId: opts.organizationId })) tally(r.walletId, r.assetId, r.account).ledger = BigInt(r.total);
      for (const r of await walletDebtsOf(trx, ids, opts.organizationId)) tally(r.walletId, r.assetId, r.account).debt = BigInt(r.amount);
      // Transfer lines taken from custody and not final yet: in flight until their transaction is
      // mined by the block read; once mined, what they sent has left and their gas is paid on chain
      // (the ledger charges it when the line is final).
      const open = await openItemsOnChain(trx, blockchainId, opts.organizationId);
      const sentItems = new Set<string>();
      for (const i of open) {
        const receipt = await minedBy([i.txHash, ...(i.replacedTxHashes ?? [])]);
        // A mined cancellation sent nothing: the amount is still at the address (and only its gas is paid).
        if (receipt?.status === 1 && !i.cancelTxHashes.includes(receipt.hash)) sentItems.add(i.id);
        else {
          tally(i.walletId, i.assetId, 'custody').inFlight += BigInt(i.rawAmount);
          // The coin a deposit to trading sends with a token (TradingService took it from custody).
          if (i.kind === 'trading_deposit' && native && i.assetId !== native.id && i.callValue) tally(i.walletId, native.id, 'custody').inFlight += BigInt(i.callValue);
        }
        if (receipt && native) tally(i.walletId, native.id, 'custody').inFlight -= receipt.fee;
      }
      const withdrawing = await org(trx('tradingTransfers').where({ blockchainId, direction: 'WITHDRAWAL' }).whereIn('status', ['PENDING_APPROVAL', 'PENDING', 'SUBMITTED']).select('id', 'walletId', 'assetId', 'rawAmount'), 'organizationId');
      for (const w of withdrawing) if (!paidOut.has(w.id)) tally(w.walletId, w.assetId, 'trading').inFlight += BigInt(w.rawAmount);
      // Paid by the block read, not CONFIRMED yet: at its recipient's address, credited to that Keel wallet's custody once CONFIRMED.
      for (const w of paidOut.values()) {
        const holder = await payoutHolder(trx, w);
        if (holder && (!opts.organizationId || holder.organizationId === opts.organizationId)) tally(holder.walletId, w.assetId, 'custody').inFlight += BigInt(w.rawAmount);
      }
      // Deposits to trading the contract has by the block read, credited to trading once CONFIRMED (a migration's never: trading counted it already).
      const depositing = await org(trx('tradingTransfers').where({ blockchainId, direction: 'DEPOSIT', status: 'PENDING', migration: false }).select('walletId', 'assetId', 'rawAmount', 'depositItemId'), 'organizationId');
      for (const dep of depositing) if (sentItems.has(dep.depositItemId)) tally(dep.walletId, dep.assetId, 'trading').inFlight += BigInt(dep.rawAmount);
      // Trades still to settle only: a FAILED trade never reaches the contract, so what it moved in the
      // ledger (the counterparty's proceeds that never arrive) is a difference the operator must see.
      const unsettled = await deltasToSettle(trx, { blockchainId, settledBatchIds: settledBatches });
      const walletIds = [...new Set([...tallies.values()].map((l) => l.walletId).concat([...unsettled.keys()].map((k) => k.split('|')[0])))];
      const accounts = await walletAccounts(trx, walletIds);
      for (const { walletId, assetId, net } of unsettled.values()) {
        if (opts.organizationId && accounts.get(walletId)?.organizationId !== opts.organizationId) continue;
        tally(walletId, assetId, 'trading').unsettled = net;
      }
      return { assets, tallies, accounts };
    },
    { isolationLevel: 'repeatable read' },
  );

  const contract = contractAddress ? new ethers.Contract(contractAddress, settlementInterface(), provider) : null;
  const differences: ReconcileLine[] = [];
  const checks = [...tallies.values()].filter((l) => accounts.has(l.walletId) && (l.account === 'custody' || contract));
  let read = 0;
  await forEachBounded(checks, RPC_CONCURRENCY, async (l) => {
    const account = accounts.get(l.walletId)!;
    const asset = assets.get(l.assetId)!;
    const token = asset.isNative ? NATIVE_TOKEN : ethers.getAddress(asset.address);
    const onChain: bigint =
      l.account === 'trading'
        ? await contract!.balanceOf(token, account.address, { blockTag })
        : asset.isNative
          ? await provider.getBalance(account.address, blockTag)
          : await new ethers.Contract(token, erc20, provider).balanceOf(account.address, { blockTag });
    opts.onProgress?.(++read, checks.length);
    const expected = l.ledger - l.unsettled + l.inFlight - l.debt;
    const difference = onChain - expected;
    if (difference === 0n) return;
    differences.push({
      blockchainId,
      organizationId: account.organizationId,
      walletId: l.walletId,
      address: account.address,
      assetId: l.assetId,
      symbol: asset.symbol,
      account: l.account,
      ledger: l.ledger.toString(),
      unsettled: l.unsettled.toString(),
      inFlight: l.inFlight.toString(),
      debt: l.debt.toString(),
      expected: expected.toString(),
      onChain: onChain.toString(),
      difference: difference.toString(),
    });
  });
  differences.sort((a, b) => (a.walletId + a.assetId + a.account < b.walletId + b.assetId + b.account ? -1 : 1));
  return { blockchainId, contract: contractAddress, blockNumber: blockTag, checked: checks.length, differences };
}
