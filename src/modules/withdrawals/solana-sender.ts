import type { Knex } from 'knex';
import { address, TransactionPartialSigner } from '@solana/kit';
import type { Logger } from '../../platform/logger';
import type { Failpoints } from '../../platform/failpoints';
import { KeelError } from '../../platform/errors';
import { formatScaled } from '../../platform/decimal';
import { PreparedTransfer, PreparedTransferStore, RecipientRefused, sendOnce, TransferRefused } from '../../platform/chain-port/chain-port';
import type { ChainNetworks, ChainService, SolanaNetwork } from '../chains';
import type { SendingWallet, SendingWallets } from '../wallets';
import { inFlightByAsset } from './in-flight';
import { chainAsset } from '../../platform/chain-port/chain-port';
import { moveLine, recordedBlock } from './sending-item';
import { invalidRecipient } from './transfer-families';
import type { SendingItem } from './sending-item';
import type { PricedLine } from './transfer.domain';

/** What the Solana sender shares with the transaction sender: the signed listeners and how a line is made final. */
export interface LineSettlement {
  signed(trx: Knex.Transaction, item: SendingItem): Promise<void>;
  finish(item: SendingItem, outcome: { status: 'CONFIRMED' | 'FAILED'; error: string | null; txHash?: string; replacedTxHashes?: string[]; blockNumber?: number; feePaid?: string }): Promise<void>;
}

/** A line as the Solana sender reads it: the sending item and its recorded transaction's validity and estimated fees (what is charged is read from the chain). */
interface SolanaItem extends SendingItem {
  validThrough: string | null;
  validFrom: string | null;
  networkFee: string | null;
  accountCreationFee: string | null;
}

/** Another sender moved the line first: this one stops. */
class LineMoved extends Error {}

/** Lines sent per tick, and lines followed per tick (each one status read). */
const BATCH = 20;
const IN_FLIGHT_BATCH = 100;

/**
 * Sends the queued lines of Solana clusters through the chain port (issue 35; the EVM lines are the
 * TransactionSender's, nonce-based, through EvmChain). Each line's signed transaction and the block
 * height past which it can no longer land are recorded on the line (compare-and-set on its status
 * and signature) BEFORE it is broadcast; every step after a crash or on another worker starts from
 * that record: the same transaction is sent again while it can still land, and a new one is prepared
 * (and recorded, the old signature kept in replacedTxHashes) only once the old one has expired unseen
 * at finalized (chain-port.ts: sendOnce). A line is final when its transaction is finalized: CONFIRMED,
 * or FAILED (its amount refunded) when it failed on chain or was refused before it could land; its
 * fee is what the finalized transaction cost the sender, read from the chain.
 */
export class SolanaSender {
  constructor(
    private readonly db: Knex,
    private readonly networks: ChainNetworks,
    private readonly chains: ChainService,
    private readonly wallets: SendingWallets,
    private readonly settlement: LineSettlement,
    private readonly failpoints: Failpoints | undefined,
    private readonly logger: Logger,
  ) {}

  async tick(): Promise<void> {
    const clusters = this.networks.solanaNetworks().map((n) => n.blockchainId);
    if (!clusters.length) return;
    const lines = () =>
      this.db('transfer_items as i')
        .join('transfers as t', 't.id', 'i.transferId')
        .select('i.*', 't.organizationId', 't.masterWalletId', 't.addressId', 't.blockchainId', 't.fromAddress', 't.kind')
        .whereIn('t.blockchainId', clusters)
        .whereIn('t.status', ['QUEUED', 'SUBMITTED'])
        .orderBy([{ column: 'i.createdAt' }, { column: 'i.position' }]);
    // Lines not sent yet and lines being followed to finality are taken apart: a batch of sent lines
    // waiting out finality (about 13 s) must not hold back the lines queued behind them.
    const [unsent, inFlight]: SolanaItem[][] = await Promise.all([
      lines()
        .where('i.status', 'QUEUED')
        // A line waiting on another (a sweep on its fee top-up) goes once that one is finalized; the
        // TransactionSender fails it, refunded, should that one fail or be rejected.
        .where((q) => q.whereNull('i.afterItemId').orWhereExists(this.db('transfer_items as d').whereRaw('d.id = i.after_item_id').where('d.status', 'CONFIRMED')))
        .limit(BATCH),
      lines().whereIn('i.status', ['SIGNED', 'SUBMITTED']).limit(IN_FLIGHT_BATCH),
    ]);
    const items = [...unsent, ...inFlight];
    for (const item of items) {
      try {
        await this.step(item);
      } catch (e) {
        if (e instanceof LineMoved) continue;
        this.logger.warn({ itemId: item.id, err: e }, 'solana sender: step failed, retrying');
      }
    }
  }

  private async step(item: SolanaItem): Promise<void> {
    const network = this.networks.solana(item.blockchainId)!;
    const asset = await this.chains.assetRow(item.assetId);
    if (!asset) return this.settlement.finish(item, { status: 'FAILED', error: 'the asset is no longer configured' });
    const request = { to: item.recipient, asset: chainAsset(asset), amount: BigInt(item.rawAmount) };
    const current = { item };
    let sent: PreparedTransfer;
    try {
      // The key is opened only if a transaction must be signed (not while a recorded one is followed).
      const signer: TransactionPartialSigner = {
        address: address(item.fromAddress),
        signTransactions: async (transactions, config) => (await this.wallets.solanaSigner(item.organizationId, item.masterWalletId, item.addressId)).signTransactions(transactions, config),
      };
      sent = await sendOnce(network.port, signer, request, this.store(current));
    } catch (e) {
      if (!(e instanceof TransferRefused)) throw e;
      return this.refused(network, current.item, e.message);
    }
    let line = current.item;
    if (line.status === 'SIGNED') {
      if (!(await this.move(this.db, line, { status: 'SUBMITTED', submittedAt: this.db.fn.now(), error: null }))) return;
      line = { ...line, status: 'SUBMITTED' };
    }
    const outcome = await network.port.outcome(sent);
    if (outcome.state === 'undetermined') return this.undetermined(line, outcome.reason);
    // The slot a confirmed transaction landed in, recorded before it is final (balances are read at
    // confirmed, so its amount has left them: in-flight.ts); cleared should it be rolled back.
    if (outcome.state !== 'landed' || outcome.finality === 'confirmed') {
      const seenIn = outcome.state === 'landed' ? outcome.height : null;
      if (recordedBlock(line) !== seenIn) await this.move(this.db, line, { blockNumber: seenIn });
      return;
    }
    if (outcome.finality !== 'final') return;
    // Charged what the transaction cost on chain, never the prepared estimate: two lines to the same
    // new recipient are both prepared with its token account's rent, and only the first to land pays it.
    if (!outcome.cost) return void this.logger.info({ itemId: line.id, txHash: sent.txId }, 'solana transfer finalized but not readable yet: finished on a later step');
    const fee = outcome.cost.fee + outcome.cost.accountCreation;
    await this.settlement.finish(line, {
      status: outcome.failed ? 'FAILED' : 'CONFIRMED',
      error: outcome.failed ? `the transaction failed on chain: ${outcome.error ?? 'unknown error'}` : null,
      txHash: sent.txId,
      blockNumber: outcome.height,
      feePaid: fee.toString(),
    });
  }

  /**
   * The cluster refused the line's transaction (funds short, ...). Failed (and refunded) only when no
   * transaction of the line can still land: one recorded earlier may have been sent already.
   */
  private async refused(network: SolanaNetwork, item: SolanaItem, reason: string): Promise<void> {
    const recorded = this.recorded(item);
    if (recorded) {
      const outcome = await network.port.outcome(recorded);
      if (outcome.state === 'undetermined') return this.undetermined(item, outcome.reason);
      if (outcome.state !== 'expired') return void (await this.move(this.db, item, { error: reason }));
    }
    await this.settlement.finish(item, { status: 'FAILED', error: reason });
  }

  /** The line waits, its reason on it for the operator, until a node can tell what became of its transaction. */
  private async undetermined(item: SolanaItem, reason: string): Promise<void> {
    if (item.error === reason) return;
    this.logger.error({ itemId: item.id, txHash: item.txHash }, reason);
    await this.move(this.db, item, { error: reason });
  }

  private recorded(item: SolanaItem): PreparedTransfer | undefined {
    if (!item.txHash || !item.rawTx) return undefined;
    const fee = BigInt(item.networkFee ?? 0);
    const accountCreation = BigInt(item.accountCreationFee ?? 0);
    return { txId: item.txHash, raw: item.rawTx, validThrough: item.validThrough === null ? null : Number(item.validThrough), validFrom: item.validFrom === null ? null : Number(item.validFrom), nonce: null, fee: { fee, accountCreation, nativeNeeded: fee + accountCreation } };
  }

  /** The line's prepared transaction, kept on the line: written (and committed) before it is broadcast. */
  private store(current: { item: SolanaItem }): PreparedTransferStore {
    return {
      load: async () => this.recorded(current.item),
      save: async (prepared, replacing) => {
        const item = current.item;
        const changes = {
          status: 'SIGNED',
          txHash: prepared.txId,
          rawTx: prepared.raw,
          validThrough: prepared.validThrough === null ? null : String(prepared.validThrough),
          validFrom: prepared.validFrom === null ? null : String(prepared.validFrom),
          networkFee: prepared.fee.fee.toString(),
          accountCreationFee: prepared.fee.accountCreation.toString(),
          replacedTxHashes: replacing ? [...(item.replacedTxHashes ?? []), replacing.txId] : (item.replacedTxHashes ?? []),
        };
        const saved = await this.db.transaction(async (trx) => {
          if (!(await this.move(trx, item, changes))) return false;
          await trx('transfers').where({ id: item.transferId, status: 'QUEUED' }).update({ status: 'SUBMITTED', updatedAt: trx.fn.now() });
          await this.settlement.signed(trx, { ...item, ...changes } as SolanaItem);
          return true;
        });
        if (!saved) throw new LineMoved();
        current.item = { ...item, ...changes } as SolanaItem;
        if (replacing) this.logger.info({ itemId: item.id, expired: replacing.txId, by: prepared.txId }, 'solana transfer prepared again after its blockhash expired');
        // Crash tests: the transaction is recorded and not yet broadcast.
        this.failpoints?.hit('solana-transfer:recorded');
      },
    };
  }

  /** Compare-and-set on the status and signature this sender read (moveLine); false when another sender moved the line first. */
  private move(db: Knex | Knex.Transaction, item: SolanaItem, changes: Record<string, unknown>): Promise<boolean> {
    return moveLine(db, item, changes);
  }
}

/**
 * What a Solana address can send (a token: its associated token account's balance, the account a
 * transfer moves it from) must cover a transfer plus every line still on its way out of it,
 * and its SOL the fees and the rent of each recipient's token account the transfer creates (the
 * chain port's estimate, which also refuses a transfer the cluster would refuse).
 */
export async function ensureSolanaFunds(db: Knex, wallet: SendingWallet, network: SolanaNetwork, lines: PricedLine[]): Promise<void> {
  const port = network.port;
  const byId = new Map(lines.map((l) => [l.asset.id, l.asset]));
  const needed = await inFlightByAsset(db, wallet.address, network.blockchainId, [...byId.keys()]);
  for (const l of lines) needed.set(l.asset.id, (needed.get(l.asset.id) ?? 0n) + l.rawAmount);
  const short = (have: bigint, need: bigint, asset: { id?: string; symbol: string; decimals: number }) =>
    new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds ${formatScaled(have, asset.decimals)} ${asset.symbol}; this transfer, its fees and those in flight need ${formatScaled(need, asset.decimals)}`, {
      ...(asset.id ? { assetId: asset.id } : {}),
      available: formatScaled(have, asset.decimals),
      required: formatScaled(need, asset.decimals),
    });
  const sol = await port.balance(wallet.address, { kind: 'native' });
  if (sol === 0n) throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds no SOL to pay fees`);
  // The amounts first (a transfer short of them would also fail the fee estimate's simulation).
  for (const [id, asset] of byId) {
    const have = asset.isNative ? sol : await port.sendable(wallet.address, chainAsset(asset));
    if (have < needed.get(id)!) throw short(have, needed.get(id)!, asset);
  }
  let fees = 0n;
  for (const [i, l] of lines.entries()) {
    try {
      const estimate = await port.estimateTransfer(wallet.address, { to: l.recipient, asset: chainAsset(l.asset), amount: l.rawAmount });
      fees += estimate.fee + estimate.accountCreation;
    } catch (e) {
      if (!(e instanceof TransferRefused)) throw e;
      if (e instanceof RecipientRefused) throw invalidRecipient(`assets.${i}.recipient`, `assets.${i}.recipient: ${e.message}`);
      throw KeelError.invalidField(`assets.${i}.amount`, `the cluster would refuse this transfer: ${e.message}`);
    }
  }
  const nativeLine = lines.find((l) => l.asset.isNative)?.asset;
  const solNeeded = (nativeLine ? needed.get(nativeLine.id)! : 0n) + fees;
  if (sol < solNeeded) throw short(sol, solNeeded, nativeLine ?? { symbol: 'SOL', decimals: 9 });
}
