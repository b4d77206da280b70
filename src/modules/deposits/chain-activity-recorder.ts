import { Knex } from 'knex';
import type { Outbox, PublishInput } from '../../platform/events/outbox';
import type { WatchedWallet } from '../wallets';
import type { ChainTransfer, PaidFee, ScannedRange } from '../../platform/chain-port/chain-port';
import { ChainCursor, ChainTransferModel, isNftTransfer } from './chain-transfer.model';
import { isNftStandard, nftCategory } from '../chains';
import { formatScaled } from '../../platform/decimal';
import { Hook } from '../../platform/events/hooks';

/** What the recorder needs to know about a chain's assets to label what it saw. */
export interface ChainAssets {
  blockchain: { id: string; name: string; slug: string };
  /** By lower-cased token contract address; the native coin under NATIVE_KEY. */
  byToken: Map<string, { id: string; symbol: string; decimals: number; address: string; standard: string }>;
}
export const NATIVE_KEY = 'native';

/**
 * Told of every incoming transfer as it is confirmed and as a reorg takes it back, inside the
 * transaction that records it (the trading ledger credits and reverses here).
 */
export interface DepositListener {
  /** The incoming transfers one scan confirmed, in chain order. */
  confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void>;
  reverted(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void>;
}

/**
 * Told of every fungible transfer out of a watched address, and of every fee a watched address paid
 * for a transaction it sent, as it is confirmed and as a reorg (or a chain reset) takes it back,
 * inside the transaction that records it: the custody ledger debits what left, and the gas paid, by
 * a transaction Keel did not book itself.
 */
export interface OutflowListener {
  /** The outgoing transfers one scan confirmed, in chain order. */
  outflowsConfirmed(trx: Knex.Transaction, outflows: ChainTransferModel[]): Promise<void>;
  outflowsReverted(trx: Knex.Transaction, outflows: ChainTransferModel[]): Promise<void>;
  /** The fees one scan confirmed (after its outflows), in chain order. */
  feesConfirmed(trx: Knex.Transaction, fees: ChainFee[]): Promise<void>;
  feesReverted(trx: Knex.Transaction, fees: ChainFee[]): Promise<void>;
}

/** A fee a watched address paid for a transaction it sent (EVM), once per (chain, transaction): a chain_fees row. */
export interface ChainFee {
  id: string;
  organizationId: string;
  blockchainId: string;
  masterWalletId: string;
  addressId: string | null;
  txHash: string;
  fromAddress: string;
  blockNumber: string;
  blockHash: string;
  /** In the chain's native coin, base units. */
  fee: string;
  status: 'CONFIRMED' | 'REVERTED';
}

/** Someone else (another worker) moved the cursor first; this scan's work is dropped. */
export class CursorMovedError extends Error {}

/**
 * Writes what the deposit watcher saw: transfers, the block hashes it walked, and its cursor, in one
 * transaction guarded by the cursor it started from. Exactly once follows from that guard and from
 * the unique (chain, tx hash, log index, direction) key.
 */
export class ChainActivityRecorder {
  /** Inside the scan's transaction: a listener's error rolls the scan back (it is tried again). */
  private readonly confirmed = new Hook<[Knex.Transaction, ChainTransferModel[]]>();
  private readonly reverted = new Hook<[Knex.Transaction, ChainTransferModel[]]>();
  private readonly outflowsConfirmed = new Hook<[Knex.Transaction, ChainTransferModel[]]>();
  private readonly outflowsReverted = new Hook<[Knex.Transaction, ChainTransferModel[]]>();
  private readonly feesConfirmed = new Hook<[Knex.Transaction, ChainFee[]]>();
  private readonly feesReverted = new Hook<[Knex.Transaction, ChainFee[]]>();

  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
  ) {}

  /**
   * Adds a listener to both hooks (the order of the listeners is set in src/services.ts). A listener
   * is told of fungible deposits only (the ledger, sweeps, checkouts and settlement count value),
   * unless it asks for NFT deposits too (`withNfts`: the AML flagger screens every sender).
   */
  onDeposit(listener: DepositListener, options: { withNfts?: boolean } = {}): void {
    const told = (deposits: ChainTransferModel[]) => (options.withNfts ? deposits : deposits.filter((d) => !isNftTransfer(d)));
    const call = (fn: (trx: Knex.Transaction, deposits: ChainTransferModel[]) => Promise<void>) => async (trx: Knex.Transaction, deposits: ChainTransferModel[]) => {
      const mine = told(deposits);
      if (mine.length) await fn(trx, mine);
    };
    this.confirmed.add(call((trx, d) => listener.confirmed(trx, d)));
    this.reverted.add(call((trx, d) => listener.reverted(trx, d)));
  }

  /** Adds a listener to the outgoing hooks; it is told of fungible transfers out only (not NFTs), and of every fee paid (an NFT's transaction's too). */
  onOutflow(listener: OutflowListener): void {
    const fungible = (fn: (trx: Knex.Transaction, outflows: ChainTransferModel[]) => Promise<void>) => async (trx: Knex.Transaction, outflows: ChainTransferModel[]) => {
      const told = outflows.filter((t) => !isNftTransfer(t));
      if (told.length) await fn(trx, told);
    };
    this.outflowsConfirmed.add(fungible((trx, o) => listener.outflowsConfirmed(trx, o)));
    this.outflowsReverted.add(fungible((trx, o) => listener.outflowsReverted(trx, o)));
    this.feesConfirmed.add((trx, fees) => listener.feesConfirmed(trx, fees));
    this.feesReverted.add((trx, fees) => listener.feesReverted(trx, fees));
  }

  /** Every listener as one, in the order they were added (the chain-reset reconciler takes deposits and outflows back through it). */
  readonly allListeners: DepositListener & OutflowListener = {
    confirmed: (trx, deposits) => this.confirmed.run(trx, deposits),
    reverted: (trx, deposits) => this.reverted.run(trx, deposits),
    outflowsConfirmed: (trx, outflows) => this.outflowsConfirmed.run(trx, outflows),
    outflowsReverted: (trx, outflows) => this.outflowsReverted.run(trx, outflows),
    feesConfirmed: (trx, fees) => this.feesConfirmed.run(trx, fees),
    feesReverted: (trx, fees) => this.feesReverted.run(trx, fees),
  };

  async cursor(blockchainId: string): Promise<ChainCursor | null> {
    const row = await this.db('chain_cursors').where({ blockchainId }).first();
    return row ? { blockNumber: Number(row.blockNumber), blockHash: row.blockHash } : null;
  }

  /** Starts watching a chain at `block` (history before it is not scanned). */
  async startAt(blockchainId: string, block: { height: number; hash: string }): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('chain_cursors').insert({ blockchainId, blockNumber: block.height, blockHash: block.hash }).onConflict('blockchain_id').ignore();
      await trx('chain_blocks').insert({ blockchainId, blockNumber: block.height, blockHash: block.hash }).onConflict(['blockchain_id', 'block_number']).ignore();
    });
  }

  /** The hashes recorded for recent blocks, newest first. */
  async recentBlocks(blockchainId: string): Promise<ChainCursor[]> {
    const rows = await this.db('chain_blocks').where({ blockchainId }).orderBy('blockNumber', 'desc');
    return rows.map((r) => ({ blockNumber: Number(r.blockNumber), blockHash: r.blockHash }));
  }

  async record(assets: ChainAssets, expected: ChainCursor, range: ScannedRange, watched: Map<string, WatchedWallet>, reorgWindow: number): Promise<ChainTransferModel[]> {
    const blockchainId = assets.blockchain.id;
    return this.db.transaction(async (trx) => {
      await this.claimCursor(trx, blockchainId, expected);
      const rows = transferRows(assets, range, watched);
      const saved = rows.length
        ? await trx('chain_transfers')
            .insert(rows)
            .onConflict(['blockchain_id', 'tx_hash', 'log_index', 'batch_index', 'direction'])
            // A transfer a reorg took back and the new fork included again counts again, once.
            .merge(['status', 'reverted_at', 'block_number', 'block_hash', 'block_timestamp'])
            .where('chain_transfers.status', 'REVERTED')
            .returning('*')
        : [];
      const transfers = saved.map((r) => ChainTransferModel.fromDatabaseJson(r as never));
      const confirmed = transfers.filter((t) => t.direction === 'incoming');
      if (confirmed.length) await this.allListeners.confirmed(trx, confirmed);
      // After the deposits: money that came in and went out in the same scan is there to be debited.
      const outflows = transfers.filter((t) => t.direction === 'outgoing');
      if (outflows.length) await this.allListeners.outflowsConfirmed(trx, outflows);
      // Then the fees the watched senders paid, with the value their transactions moved.
      const feeRows = (range.fees ?? []).flatMap((f) => feeRow(blockchainId, f, watched));
      const fees: ChainFee[] = feeRows.length
        ? await trx('chain_fees')
            .insert(feeRows)
            .onConflict(['blockchain_id', 'tx_hash'])
            // A fee a reorg took back, paid again on the new fork, counts again, once.
            .merge(['status', 'reverted_at', 'block_number', 'block_hash', 'fee'])
            .where('chain_fees.status', 'REVERTED')
            .returning('*')
        : [];
      if (fees.length) await this.allListeners.feesConfirmed(trx, fees);
      await this.outbox.publishMany(trx, confirmed.map((d) => incomingEvent('incoming_transfer', d, assets, watched)));

      const last = range.blocks[range.blocks.length - 1];
      await trx('chain_blocks').insert(range.blocks.map((b) => ({ blockchainId, blockNumber: b.height, blockHash: b.hash }))).onConflict(['blockchain_id', 'block_number']).merge();
      await trx('chain_blocks').where({ blockchainId }).where('blockNumber', '<', last.height - reorgWindow).delete();
      await trx('chain_cursors').where({ blockchainId }).update({ blockNumber: last.height, blockHash: last.hash, updatedAt: trx.fn.now() });
      return confirmed;
    });
  }

  /**
   * Undoes everything recorded above `ancestor` (the newest block both forks share): transfers become
   * REVERTED, listeners give back what outflows debited and take back what deposits credited, and
   * *.incoming_transfer_reverted is emitted.
   */
  async rewind(assets: ChainAssets, expected: ChainCursor, ancestor: ChainCursor, watched: Map<string, WatchedWallet>): Promise<ChainTransferModel[]> {
    const blockchainId = assets.blockchain.id;
    return this.db.transaction(async (trx) => {
      await this.claimCursor(trx, blockchainId, expected);
      const rows = await trx('chain_transfers')
        .where({ blockchainId, status: 'CONFIRMED' })
        .where('blockNumber', '>', ancestor.blockNumber)
        .update({ status: 'REVERTED', revertedAt: trx.fn.now() })
        .returning('*');
      const transfers = rows.map((r) => ChainTransferModel.fromDatabaseJson(r as never));
      // Outflows and fees first: what they took is given back before the deposits are taken back from it.
      const outflows = transfers.filter((t) => t.direction === 'outgoing');
      if (outflows.length) await this.allListeners.outflowsReverted(trx, outflows);
      const fees: ChainFee[] = await trx('chain_fees')
        .where({ blockchainId, status: 'CONFIRMED' })
        .where('blockNumber', '>', ancestor.blockNumber)
        .update({ status: 'REVERTED', revertedAt: trx.fn.now() })
        .returning('*');
      if (fees.length) await this.allListeners.feesReverted(trx, fees);
      const reverted = transfers.filter((t) => t.direction === 'incoming');
      if (reverted.length) await this.allListeners.reverted(trx, reverted);
      await this.outbox.publishMany(trx, reverted.map((d) => incomingEvent('incoming_transfer_reverted', d, assets, watched)));
      await trx('chain_blocks').where({ blockchainId }).where('blockNumber', '>', ancestor.blockNumber).delete();
      await trx('chain_blocks').insert({ blockchainId, blockNumber: ancestor.blockNumber, blockHash: ancestor.blockHash }).onConflict(['blockchain_id', 'block_number']).merge();
      await trx('chain_cursors').where({ blockchainId }).update({ blockNumber: ancestor.blockNumber, blockHash: ancestor.blockHash, updatedAt: trx.fn.now() });
      return reverted;
    });
  }

  private async claimCursor(trx: Knex.Transaction, blockchainId: string, expected: ChainCursor): Promise<void> {
    const current = await trx('chain_cursors').where({ blockchainId }).forUpdate().first();
    if (!current || Number(current.blockNumber) !== expected.blockNumber || current.blockHash !== expected.blockHash) {
      throw new CursorMovedError(`cursor of ${blockchainId} moved`);
    }
  }
}

function transferRows(assets: ChainAssets, range: ScannedRange, watched: Map<string, WatchedWallet>) {
  const rows = [];
  for (const t of range.transfers) {
    const asset = assets.byToken.get(t.asset.kind === 'token' ? t.asset.address.toLowerCase() : NATIVE_KEY);
    // A transfer of nothing is not recorded: the listeners (the ledger first) refuse an amount of zero,
    // and a refusal would roll the scan back and stop the chain's watcher for good.
    if (!asset || t.amount <= 0n) continue;
    const sender = t.from === null ? undefined : watched.get(t.from.toLowerCase());
    const receiver = watched.get(t.to.toLowerCase());
    const internal = !!sender && !!receiver && everySenderOf(t).every((a) => watched.get(a.toLowerCase())?.organizationId === receiver.organizationId);
    const category = internal ? 'internal' : t.asset.kind === 'native' ? 'external' : isNftStandard(asset.standard) ? nftCategory(asset.standard) : 'erc20';
    // A collection's event from a contract registered as fungible (or the reverse) is not recorded.
    if ((t.tokenId !== undefined) !== isNftStandard(asset.standard)) continue;
    for (const [direction, wallet] of [['incoming', receiver], ['outgoing', sender]] as const) {
      if (!wallet) continue;
      rows.push({
        organizationId: wallet.organizationId,
        blockchainId: assets.blockchain.id,
        masterWalletId: wallet.masterWalletId,
        addressId: wallet.kind === 'address' ? wallet.id : null,
        assetId: asset.id,
        direction,
        category,
        txHash: t.txId,
        logIndex: t.index,
        blockNumber: t.height,
        blockHash: t.blockHash,
        blockTimestamp: new Date(t.timestamp * 1000),
        fromAddress: t.from ?? '',
        alsoFrom: t.alsoFrom ?? [],
        toAddress: t.to,
        rawValue: t.amount.toString(),
        tokenId: t.tokenId === undefined ? null : t.tokenId.toString(),
        batchIndex: t.batchIndex,
      });
    }
  }
  return rows;
}

/** The chain_fees row of a fee a watched address paid, its wallet's (none when the sender is no longer watched). */
function feeRow(blockchainId: string, f: PaidFee, watched: Map<string, WatchedWallet>) {
  const wallet = watched.get(f.from.toLowerCase());
  if (!wallet) return [];
  return [{ organizationId: wallet.organizationId, blockchainId, masterWalletId: wallet.masterWalletId, addressId: wallet.kind === 'address' ? wallet.id : null, txHash: f.txId, fromAddress: f.from, blockNumber: f.height, blockHash: f.blockHash, fee: f.fee.toString() }];
}

/**
 * `from` and, on Solana, every other account the asset left in the transaction. A transfer is
 * internal (and so not screened) only when every one of them is a watched address of the receiver's
 * organisation: one outside sender among them is enough to screen it.
 */
const everySenderOf = (t: ChainTransfer): string[] => [t.from ?? '', ...(t.alsoFrom ?? [])].filter(Boolean);

/** address.* for a deposit address, master.* for the master wallet's own address; the spec's data shape. */
function incomingEvent(name: 'incoming_transfer' | 'incoming_transfer_reverted', d: ChainTransferModel, assets: ChainAssets, watched: Map<string, WatchedWallet>): PublishInput<Record<string, unknown>> {
  const asset = [...assets.byToken.values()].find((a) => a.id === d.assetId)!;
  const wallet = watched.get(d.toAddress.toLowerCase());
  return {
    organizationId: d.organizationId,
    type: `${d.addressId ? 'address' : 'master'}.${name}`,
    data: {
      id: d.id,
      hash: d.txHash,
      logIndex: d.logIndex,
      blockNumber: String(d.blockNumber),
      blockHash: d.blockHash,
      from: d.fromAddress,
      to: d.toAddress,
      value: formatScaled(BigInt(d.rawValue), asset.decimals),
      category: d.category,
      asset: { id: asset.id, symbol: asset.symbol, decimals: asset.decimals },
      blockchain: assets.blockchain,
      wallet: { id: d.addressId ?? d.masterWalletId, name: wallet?.name ?? null, walletAddress: d.toAddress, masterWalletId: d.masterWalletId },
      rawContract: { address: asset.address, decimals: asset.decimals, rawValue: d.rawValue },
      // An NFT: which token, of which standard, how many (value is that count too: decimals are 0).
      ...(isNftTransfer(d) ? { nft: { tokenId: d.tokenId, amount: d.rawValue, standard: asset.standard, batchIndex: d.batchIndex } } : {}),
    },
  };
}
