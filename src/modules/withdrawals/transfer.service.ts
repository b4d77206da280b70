import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { formatScaled } from '../../platform/decimal';
import type { ChainNetworks, ChainNetwork, ChainService } from '../chains';
import type { SendingWallet, SendingWallets, WalletSource } from '../wallets';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { checkSanctions, checkTransferPolicy, RecipientScreen } from './transfer-policy';
import { inFlightByAsset } from './in-flight';
import { ensureNftsHeld, holdNfts } from './nft-funds';
import { priceLines } from './transfer-lines';
import { chainAsset, TransferRefused } from '../../platform/chain-port/chain-port';
import { ensureSolanaFunds } from './solana-sender';
import { TransferApprovals } from './transfer-approvals';
import { TransferCancellations } from './transfer-cancellations';
import { TransferGasEstimates } from './transfer-gas-estimates';
import { TransferQueries } from './transfer-queries';
import { GAS_HEADROOM, GasPayerHeld, topsUpGas, type GasFromMaster, type GasPayer, type PreparedTransfer, type PricedLine, type QueuedLine, type TransferFunds, type TransferKind, type TransferLine, type TransferView } from './transfer.domain';
import { signAgainAfterChainReset } from './chain-reset-lines';
import type { SettlementContractGuard } from './settlement-contract-guard';

/**
 * Withdrawals: checked against the wallet's security configuration and its on-chain balance, then
 * queued (or held for approval) as one transaction per line for the transaction sender. This is the
 * write path; reads, approvals, cancellations and gas estimates are its parts below.
 */
export class TransferService {
  readonly queries: TransferQueries;
  readonly approvals: TransferApprovals;
  readonly cancellations: TransferCancellations;
  readonly gasEstimates: TransferGasEstimates;
  private gas?: GasPayer;

  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly funds: TransferFunds,
    private readonly uow: UnitOfWork,
    private readonly sanctions: RecipientScreen,
    private readonly settlementContracts: SettlementContractGuard,
  ) {
    this.queries = new TransferQueries(db, chains);
    this.approvals = new TransferApprovals(uow, funds, sanctions, this.queries);
    this.cancellations = new TransferCancellations(uow, chains, this.queries);
    this.gasEstimates = new TransferGasEstimates(wallets, chains, networks);
  }

  /** A chain was reset (in the reset's transaction): its lines signed but not final, of which it knows no transaction, are queued again and its nonce counts forgotten; how many lines. */
  signAgainAfterChainReset(trx: Knex.Transaction, blockchainId: string, chainKnows: (txHash: string) => Promise<boolean>): Promise<number> {
    return signAgainAfterChainReset(trx, blockchainId, chainKnows);
  }

  async spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint> {
    return this.funds.spendable(trx, walletId, assetId);
  }

  /** Set once by the module's factory: GasTopUps, which queues its top-ups through this service. */
  payGasWith(gas: GasPayer): void {
    this.gas = gas;
  }

  /**
   * A withdrawal asked for by the API key `requestedBy` (held, another admin key must approve it).
   * From a deposit address under enableGaslessWithdraw holding too little native coin for its gas,
   * the master wallet first sends it the difference (a `gas_topup`, held with it under approval)
   * and the withdrawal's lines wait for that line to confirm, as an auto-sweep's do.
   */
  async create(organizationId: string, requestedBy: string, source: WalletSource, input: { assets: TransferLine[]; note?: string }): Promise<TransferView> {
    const { transferId } = await this.uow.runChecked(
      'withdrawal',
      () => this.check(organizationId, source, input),
      (trx, prepared) => this.record(trx, prepared, 'withdrawal', input.note ?? null, requestedBy),
    );
    return this.queries.get(organizationId, transferId);
  }

  /** Records a checked send: after the master wallet's gas top-up it waits for, when it needs one (gasFromMaster). */
  private async record(trx: Knex.Transaction, { wallet, blockchainId, lines, status, gas }: PreparedTransfer, kind: TransferKind, note: string | null, requestedBy: string | null): Promise<{ transferId: string; itemIds: string[] }> {
    const afterItemId = gas ? ((await this.topUp(trx, wallet, gas, status)) ?? undefined) : undefined;
    return this.insert(trx, wallet, blockchainId, kind, status, afterItemId ? lines.map((l) => ({ ...l, afterItemId })) : lines, note, requestedBy);
  }

  /**
   * What a withdrawal from a deposit address under enableGaslessWithdraw needs in native coin, for
   * its master wallet to top it up to (null: no top-up, from a master wallet, with the flag off, or
   * on Solana, whose fees ensureSolanaFunds checks): its lines' gas at the chain's fees with the
   * sweeps' headroom and the coin they send (GasTopUps adds what the address's lines still to be
   * sent will spend: their coin and their gas).
   */
  private async gasFromMaster({ wallet, blockchainId, lines }: Omit<PreparedTransfer, 'gas'>): Promise<GasFromMaster | null> {
    if (!topsUpGas(wallet) || !this.gas) return null;
    const network = this.networks.get(blockchainId);
    if (!network) return null;
    const estimates = await Promise.all(
      lines.map((l, i) =>
        network.port.estimateTransfer(wallet.address, { to: l.recipient, asset: chainAsset(l.asset, l.tokenId), amount: l.rawAmount }).catch((e: unknown) => {
          if (!(e instanceof TransferRefused)) throw new KeelError('UPSTREAM_ERROR', "The chain's node did not answer the gas estimate; try again shortly");
          throw new KeelError('INSUFFICIENT_FUNDS', `assets.${i}: the chain refuses this transfer from ${wallet.address}: ${e.message}`, { fields: [{ field: `assets.${i}`, error: 'INVALID_FIELD' }] });
        }),
      ),
    );
    const sent = lines.filter((l) => l.asset.isNative).reduce((sum, l) => sum + l.rawAmount, 0n);
    const needed = estimates.reduce((sum, e) => sum + e.fee, 0n) * GAS_HEADROOM + sent;
    return { network, needed };
  }

  /** Queues the master wallet's top-up (gasFromMaster) in the withdrawal's transaction: the line the withdrawal waits for, or null when the address holds enough. */
  private async topUp(trx: Knex.Transaction, wallet: SendingWallet, gas: GasFromMaster, status: 'QUEUED' | 'PENDING_APPROVAL'): Promise<string | null> {
    try {
      return await this.gas!.ensure(trx, wallet, gas.network, gas.needed, { status });
    } catch (e) {
      // Nothing leaves a master wallet held by AML automatically, gas money included: the withdrawal is refused, not queued to wait.
      if (e instanceof GasPayerHeld) throw new KeelError('CONFLICT', e.message);
      throw e;
    }
  }

  /**
   * A send checked as a withdrawal is (the wallet, its chain, its security configuration, the
   * chain balance, the gas its master wallet must send it first) but not yet recorded: for another
   * module that records it with its own state change (`enqueuePrepared`, an agent payment).
   */
  async prepare(organizationId: string, source: WalletSource, assets: TransferLine[]): Promise<PreparedTransfer> {
    return this.check(organizationId, source, { assets });
  }

  /**
   * Records a prepared send inside the caller's transaction; queued, or held under
   * requireApprovalForTransfers, after its gas top-up from the master wallet as a withdrawal is
   * (create). No API key asked for it (an agent payment: the agent's key may
   * never approve, and the payment records its own decision), so any admin key may approve it.
   */
  async enqueuePrepared(trx: Knex.Transaction, prepared: PreparedTransfer, kind: TransferKind, note: string | null): Promise<{ transferId: string; itemIds: string[] }> {
    return this.record(trx, prepared, kind, note, null);
  }

  private async check(organizationId: string, source: WalletSource, input: { assets: TransferLine[] }): Promise<PreparedTransfer> {
    const wallet = await this.wallets.resolve(organizationId, source);
    const { chain, lines } = await priceLines(this.chains, this.networks, wallet, input.assets);
    checkSanctions(this.sanctions, lines);
    for (const [i, l] of lines.entries()) await this.settlementContracts.check(chain.blockchainId, l.recipient, `assets.${i}.recipient`);
    checkTransferPolicy(wallet.configurations.security, lines);
    // The funds a send needs differ in shape: on Solana the fees and a new token account's rent come out of SOL; on EVM
    // the address must hold some coin for gas, or (a deposit address under enableGaslessWithdraw) gets it from its master wallet (gasFromMaster, record).
    if (chain.family === 'evm') await this.ensureFunds(wallet, chain.network, lines);
    else await ensureSolanaFunds(this.db, wallet, chain.solana, lines);
    const status = wallet.configurations.security.requireApprovalForTransfers ? ('PENDING_APPROVAL' as const) : ('QUEUED' as const);
    const checked = { wallet, blockchainId: chain.blockchainId, lines, status };
    return { ...checked, gas: await this.gasFromMaster(checked) };
  }

  /**
   * Records a transfer another module arranged, inside the caller's transaction: one Keel decided on
   * itself (sweeps, gas top-ups), or one an API key asked for (`requestedBy`: a swap, a signing
   * request), which that key may then not approve.
   */
  async enqueue(
    trx: Knex.Transaction,
    wallet: SendingWallet,
    blockchainId: string,
    kind: TransferKind,
    lines: QueuedLine[],
    status: 'QUEUED' | 'PENDING_APPROVAL' = 'QUEUED',
    requestedBy: string | null = null,
  ): Promise<{ transferId: string; itemIds: string[] }> {
    checkSanctions(this.sanctions, lines);
    return this.insert(trx, wallet, blockchainId, kind, status, lines, null, requestedBy);
  }

  /**
   * What is already on its way out of the address in this asset (lines not yet final); with
   * `callTo`, only the lines that are calls of that contract (the swaps through one DEX router).
   */
  async inFlight(trx: Knex.Transaction, address: string, blockchainId: string, assetId: string, callTo?: string): Promise<bigint> {
    return (await inFlightByAsset(trx, address, blockchainId, [assetId], callTo)).get(assetId) ?? 0n;
  }

  /**
   * The chain balance must cover this transfer plus every line still on its way out from the same
   * address, and the address must hold some native coin for gas unless it is a deposit address
   * under enableGaslessWithdraw (its master wallet tops it up first).
   */
  async ensureFunds(wallet: SendingWallet, network: ChainNetwork, allLines: PricedLine[]): Promise<void> {
    await ensureNftsHeld(this.db, wallet.address, network, allLines);
    const lines = allLines.filter((l) => l.tokenId === undefined);
    const byId = new Map(lines.map((l) => [l.asset.id, l.asset]));
    const ids = [...byId.keys()];
    const needed = await inFlightByAsset(this.db, wallet.address, network.blockchainId, ids);
    for (const l of lines) needed.set(l.asset.id, (needed.get(l.asset.id) ?? 0n) + l.rawAmount);
    const balances = await Promise.all(ids.map((id) => network.port.balance(wallet.address, chainAsset(byId.get(id)!))));
    ids.forEach((id, i) => {
      if (balances[i] < needed.get(id)!) {
        const asset = byId.get(id)!;
        throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds ${formatScaled(balances[i], asset.decimals)} ${asset.symbol}; this transfer and those in flight need ${formatScaled(needed.get(id)!, asset.decimals)}`, {
          assetId: id,
          available: formatScaled(balances[i], asset.decimals),
          required: formatScaled(needed.get(id)!, asset.decimals),
        });
      }
    });
    // Only a deposit address under enableGaslessWithdraw gets its gas from its master wallet (gasFromMaster): a master wallet must hold its own.
    if (!topsUpGas(wallet) && (await network.port.balance(wallet.address, { kind: 'native' })) === 0n) {
      throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds no native coin to pay gas`);
    }
  }

  private async insert(trx: Knex.Transaction, wallet: SendingWallet, blockchainId: string, kind: TransferKind, status: string, lines: QueuedLine[], note: string | null, requestedBy: string | null): Promise<{ transferId: string; itemIds: string[] }> {
    const network = this.networks.get(blockchainId);
    if (network) await holdNfts(trx, wallet.address, network, lines);
    const [transfer] = await trx('transfers')
      .insert({ organizationId: wallet.organizationId, masterWalletId: wallet.masterWalletId, addressId: wallet.addressId, blockchainId, fromAddress: wallet.address, kind, status, note, requestedBy })
      .returning('id');
    const transferId = (transfer as { id: string }).id;
    // A held signing request of a message or typed data has no line: nothing is sent.
    if (!lines.length) return { transferId, itemIds: [] };
    const items: { id: string }[] = await trx('transfer_items')
      .insert(
        lines.map((l, position) => ({
          transferId,
          position,
          // When the line was queued, not when its transaction began: the sender signs lines in this
          // order, and a transaction that waited on a lock (swaps deciding their approvals one at a
          // time) queues its lines after those of the transaction that held it.
          createdAt: trx.raw('clock_timestamp()'),
          assetId: l.asset.id,
          recipient: l.recipient,
          rawAmount: l.rawAmount.toString(),
          status,
          afterItemId: l.afterItemId ?? null,
          callTo: l.call?.to ?? null,
          callData: l.call?.data ?? null,
          callValue: l.call ? l.call.value.toString() : null,
          tokenId: l.tokenId === undefined ? null : l.tokenId.toString(),
        })),
      )
      .returning('id');
    // A line that moves nothing (a DEX approval) takes nothing from the ledger, nor does an NFT (the
    // custody ledger counts fungible value; ensureNftsHeld guards an NFT against being sent twice).
    await this.funds.reserve(
      trx,
      lines.flatMap((l, i) => (l.rawAmount > 0n && l.tokenId === undefined ? [{ organizationId: wallet.organizationId, walletId: wallet.addressId ?? wallet.masterWalletId, assetId: l.asset.id, rawAmount: l.rawAmount, itemId: items[i].id }] : [])),
    );
    return { transferId, itemIds: items.map((i) => i.id) };
  }
}
