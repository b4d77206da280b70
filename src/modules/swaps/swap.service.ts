import { Knex } from 'knex';
import { isNftStandard, refuseUnlessEvm } from '../chains';
import { KeelError } from '../../platform/errors';
import { exactInDecimals, formatScaled, parseUnits } from '../../platform/decimal';
import { Ids } from '../../platform/ids';
import { toPage, PageResult, PageWindow } from '../../platform/paging';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { ChainNetwork, ChainNetworks, ChainService, AssetView } from '../chains';
import { SendingWallet, SendingWallets, walletSourceOf } from '../wallets';
import type { QueuedLine, SettlementContractGuard, TransferService } from '../withdrawals';
import { checkTransferPolicy, checksummedAddress, itemCallData, setItemCallData, setItemPredecessor } from '../withdrawals';
import { APPROVAL_GAS, DexQuoter, DexRoute, SWAP_ORDERS, SwapOrder } from './dex-quoter';
import type { DestinationScreen } from './destination-screen';
import { swapFloor, swapRefusal } from './swap-guards';
import { lockUntilCommit } from '../../platform/db/advisory-lock';

/** Slippage tolerance when none is given, in percent. */
export const DEFAULT_SLIPPAGE = '0.5';
const MAX_SLIPPAGE_BASIS_POINTS = 5_000n;
/** A signed swap is refused by the router after this long (it waits for its approval and confirmations first). */
const SWAP_DEADLINE_SECONDS = 1_800;

export interface SwapQuoteInput {
  fromAssetId: string;
  toAssetId: string;
  /** Whole units of the from asset. */
  amount: string;
  order?: string | null;
  /** Percent, e.g. "0.5"; ignored (0) for NO_SLIPPAGE. */
  slippageTolerance?: string | null;
}

export interface SwapInput extends SwapQuoteInput {
  /** Exactly one of masterWalletId (the master wallet's own address) and addressId (a deposit address). */
  masterWalletId?: string | null;
  addressId?: string | null;
  /** Who receives the output; the sending wallet itself when absent. */
  recipient?: string | null;
  /** The floor the caller saw in a quote, whole units of the to asset: the router is given the stricter of it and the slippage tolerance's. */
  minimumOutput?: string | null;
  /** Percent; raises (or lowers) the price-impact cap (SWAP_MAX_PRICE_IMPACT_PERCENT) for this swap. */
  maxPriceImpact?: string | null;
}

export interface SwapRouteStepView {
  assetId: string;
  symbol: string;
  /** The token the router is given: WETH for the native coin. */
  tokenAddress: string;
}

export interface SwapFeeView {
  amount: string;
  asset: AssetView;
  percent: string;
}

export interface SwapGasView {
  limit: string;
  approvalLimit: string;
  fee: string;
}

export interface SwapQuoteView {
  blockchainId: string;
  router: string;
  fromAsset: AssetView;
  toAsset: AssetView;
  amount: string;
  expectedOutput: string;
  minimumOutput: string;
  priceImpact: string;
  route: SwapRouteStepView[];
  fee: SwapFeeView;
  gas: SwapGasView;
  order: string;
  slippageTolerance: string;
  quotedAt: Date;
}

export interface SwapView {
  id: string;
  status: string;
  masterWalletId: string;
  addressId: string | null;
  blockchainId: string;
  fromAddress: string;
  recipient: string;
  fromAsset: AssetView;
  toAsset: AssetView;
  amount: string;
  expectedOutput: string;
  minimumOutput: string;
  outputAmount: string | null;
  priceImpact: string;
  route: string[];
  order: string;
  slippageTolerance: string;
  transferId: string;
  txHash: string | null;
  gasFee: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface SwapFilter extends PageWindow {
  status?: string | null;
  masterWalletId?: string | null;
  addressId?: string | null;
}

/** A quote as the service works with it: base units and the chosen route. */
export interface PricedSwap {
  network: ChainNetwork;
  from: AssetView;
  to: AssetView;
  amountIn: bigint;
  route: DexRoute;
  minOut: bigint;
  order: SwapOrder;
  slippageBasisPoints: bigint;
  priceImpactPpm: bigint;
  feeRaw: bigint;
}

/**
 * Swaps on the chain's Uniswap V2: quotes read from the router and pools, and swaps queued as the
 * lines of a transfer (an approval when the router may not yet spend the token, then the swap) for
 * the transaction sender, so they share its nonces, fee bumps and crash safety. The minimum output
 * is part of the signed call: the router reverts rather than deliver less.
 */
export class SwapService {
  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly transfers: TransferService,
    private readonly dex: DexQuoter,
    private readonly screen: DestinationScreen,
    private readonly settlementContracts: SettlementContractGuard,
    private readonly uow: UnitOfWork,
    /** The price-impact cap a swap may raise with maxPriceImpact (SWAP_MAX_PRICE_IMPACT_PERCENT). */
    private readonly maxPriceImpactBasisPoints: bigint,
  ) {}

  async quote(input: SwapQuoteInput): Promise<SwapQuoteView> {
    const priced = await this.price(input);
    return this.quoteView(priced, !priced.from.isNative);
  }

  /** Prices a swap of `amountIn` base units (settlement rules use it with a deposit's amount, inside their transaction `db`). */
  async priceRaw(from: AssetView, to: AssetView, amountIn: bigint, order: string, slippageTolerance: string, db?: Knex.Transaction): Promise<PricedSwap> {
    // The one branch on the family here: swaps go through an EVM DEX router, EVM-only (issue 35).
    refuseUnlessEvm(from.blockchain, 'swaps', 'fromAssetId');
    const network = this.networks.get(from.blockchainId);
    if (!network) throw new KeelError('INVALID_NETWORK', 'The chain of these assets is not served by this deployment');
    if (from.blockchainId !== to.blockchainId) throw new KeelError('INVALID_NETWORK', 'Both assets of a swap must be on the same chain');
    if (from.id === to.id) throw KeelError.invalidField('toAssetId', 'must differ from fromAssetId');
    const swapOrder = parseOrder(order);
    const slippageBasisPoints = swapOrder === 'NO_SLIPPAGE' ? 0n : parseSlippage(slippageTolerance);
    const intermediates = (await this.chains.assetsOf(from.blockchainId, db)).filter((a) => a.id !== from.id && a.id !== to.id);
    const routes = await this.dex.routes(network, from, to, amountIn, intermediates);
    if (!routes.length) throw new KeelError('VALIDATION_ERROR', `No pool on the chain's DEX swaps ${from.symbol} to ${to.symbol}`, { fields: [{ field: 'toAssetId', error: 'INVALID_FIELD' }] });
    const route = swapOrder === 'CHEAPEST' ? [...routes].sort((a, b) => (a.gasLimit === b.gasLimit ? (b.output > a.output ? 1 : -1) : a.gasLimit < b.gasLimit ? -1 : 1))[0] : routes[0];
    const described = await this.dex.describe(network, route);
    const minOut = (route.output * (10_000n - slippageBasisPoints)) / 10_000n;
    if (minOut <= 0n) throw KeelError.invalidField('amount', 'is too small to swap: the minimum output would be 0');
    return { network, from, to, amountIn, route, minOut, order: swapOrder, slippageBasisPoints, priceImpactPpm: described.priceImpactPpm, feeRaw: described.feeRaw };
  }

  private async price(input: SwapQuoteInput): Promise<PricedSwap> {
    const ids = [input.fromAssetId, input.toAssetId].filter((id) => Ids.isUuid(id)).map((id) => id.toLowerCase());
    const assets = await this.chains.assetViews(ids);
    const from = assets.get(input.fromAssetId.toLowerCase());
    const to = assets.get(input.toAssetId.toLowerCase());
    if (!from || !from.isActive) throw KeelError.invalidField('fromAssetId', 'unknown asset');
    if (!to || !to.isActive) throw KeelError.invalidField('toAssetId', 'unknown asset');
    if (isNftStandard(from.standard)) throw KeelError.invalidField('fromAssetId', 'an NFT collection is not swapped');
    if (isNftStandard(to.standard)) throw KeelError.invalidField('toAssetId', 'an NFT collection is not swapped');
    const amountIn = parseUnits(input.amount, from.decimals);
    if (amountIn === null) throw KeelError.invalidField('amount', exactInDecimals(from.decimals, { of: from.symbol }));
    if (amountIn <= 0n) throw KeelError.invalidField('amount', 'must be above 0');
    return this.priceRaw(from, to, amountIn, input.order ?? 'RECOMMENDED', input.slippageTolerance ?? DEFAULT_SLIPPAGE);
  }

  /** A swap asked for by the API key `requestedBy` (held, another admin key must approve it). */
  async create(organizationId: string, requestedBy: string, input: SwapInput): Promise<SwapView> {
    const { swapId } = await this.uow.runChecked(
      'swap',
      () => this.check(organizationId, input),
      (trx, { wallet, priced, recipient, status }) => this.enqueue(trx, wallet, priced, recipient, status, { requestedBy }),
    );
    return this.get(organizationId, swapId);
  }

  private async check(organizationId: string, input: SwapInput) {
    const wallet = await this.wallets.resolve(organizationId, walletSourceOf(input));
    const maxImpact = input.maxPriceImpact == null ? this.maxPriceImpactBasisPoints : parsePercent('maxPriceImpact', input.maxPriceImpact, 10_000n);
    const priced = this.honour(await this.price(input), input.minimumOutput ?? null, maxImpact);
    if (!wallet.blockchainIds.includes(priced.from.blockchainId)) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on the chain of these assets');
    const recipient = input.recipient ? checksummedAddress(input.recipient, 'recipient') : wallet.address;
    await this.admit(wallet, priced, recipient);
    await this.transfers.ensureFunds(wallet, priced.network, [{ asset: priced.from, recipient, rawAmount: priced.amountIn }]);
    const status = wallet.configurations.security.requireApprovalForTransfers ? 'PENDING_APPROVAL' : 'QUEUED';
    return { wallet, priced, recipient, status } as const;
  }

  /**
   * The caller's terms: its minimumOutput must not be above what the pools give now (refused before
   * anything is sent) and becomes the router's floor when stricter than the slippage tolerance's;
   * the price impact must be within the cap.
   */
  private honour(priced: PricedSwap, minimumOutput: string | null, maxImpactBasisPoints: bigint): PricedSwap {
    const { to, route } = priced;
    const callerMinimum = minimumOutput === null ? null : parseUnits(minimumOutput, to.decimals);
    if (callerMinimum === null && minimumOutput !== null) throw KeelError.invalidField('minimumOutput', exactInDecimals(to.decimals, { what: 'a positive decimal string in whole units', of: to.symbol }));
    if (callerMinimum !== null && callerMinimum <= 0n) throw KeelError.invalidField('minimumOutput', 'must be above 0');
    const expected = formatScaled(route.output, to.decimals);
    const impact = formatScaled(priced.priceImpactPpm, 4);
    const maxPriceImpact = formatScaled(maxImpactBasisPoints, 2);
    switch (swapRefusal(route.output, callerMinimum, priced.priceImpactPpm, maxImpactBasisPoints)) {
      case 'BELOW_CALLER_MINIMUM':
        throw new KeelError('VALIDATION_ERROR', `The pools give ${expected} ${to.symbol} for this swap now, below minimumOutput ${minimumOutput}: nothing was sent`, {
          fields: [{ field: 'minimumOutput', error: 'ABOVE_EXPECTED_OUTPUT' }],
          expectedOutput: expected,
          minimumOutput,
        });
      case 'PRICE_IMPACT_TOO_HIGH':
        throw new KeelError('VALIDATION_ERROR', `The swap's price impact is ${impact}%, above the cap of ${maxPriceImpact}%: swap less, or raise maxPriceImpact to accept it`, {
          fields: [{ field: 'maxPriceImpact', error: 'PRICE_IMPACT_TOO_HIGH' }],
          priceImpact: impact,
          maxPriceImpact,
        });
    }
    return { ...priced, minOut: swapFloor(priced.minOut, callerMinimum) };
  }

  /**
   * What any swap must pass before it is queued: the destination screen, not Keel's settlement
   * contract (SettlementContractGuard), and the wallet's security
   * configuration (the output may only go to an allowed recipient or back to the wallet itself; the
   * input counts against maxTransferAmount).
   */
  async admit(wallet: SendingWallet, priced: PricedSwap, recipient: string): Promise<void> {
    const verdict = await this.screen.check(wallet.organizationId, recipient, priced.network.blockchainId);
    if (!verdict.allowed) throw new KeelError(verdict.code, `The destination ${recipient} is refused: ${verdict.reason}`, { fields: [{ field: 'recipient', error: verdict.code }] });
    await this.settlementContracts.check(priced.network.blockchainId, recipient, 'recipient');
    const own = recipient.toLowerCase() === wallet.address.toLowerCase();
    const security = own ? { ...wallet.configurations.security, allowedRecipients: [] } : wallet.configurations.security;
    checkTransferPolicy(security, [{ asset: priced.from, recipient, rawAmount: priced.amountIn }]);
  }

  /**
   * Queues a priced swap inside the caller's transaction: a transfer of kind swap whose lines are
   * the approval (when the router's allowance does not cover this and the swaps already on their
   * way) and the swap, which waits for the approval to confirm. `afterItemId`: a line the first
   * waits for (a gas top-up); `requestedBy`: the API key that asked (none when Keel arranged it).
   */
  async enqueue(trx: Knex.Transaction, wallet: SendingWallet, priced: PricedSwap, recipient: string, status: 'QUEUED' | 'PENDING_APPROVAL' = 'QUEUED', { afterItemId, requestedBy = null }: { afterItemId?: string; requestedBy?: string | null } = {}): Promise<{ swapId: string; transferId: string; swapItemId: string }> {
    const { network, from, to, amountIn, route, minOut } = priced;
    const router = this.dex.router(network);
    const lines: QueuedLine[] = [];
    if (!from.isNative) {
      // The router's allowance must also cover the swaps from this address still on their way,
      // those being queued at this moment included: one swap of the token at a time decides its approval.
      await lockUntilCommit(trx, [`swap-allowance:${network.blockchainId}:${wallet.address.toLowerCase()}:${from.id}`]);
      const [allowance, pending] = await Promise.all([this.dex.allowance(network, from.address, wallet.address), this.transfers.inFlight(trx, wallet.address, network.blockchainId, from.id, router)]);
      const needed = pending + amountIn;
      // Exactly what is needed, whatever the order: a router (or a key) compromised later can take no more than is on its way.
      if (allowance < needed) lines.push({ asset: from, recipient: router, rawAmount: 0n, call: this.dex.approveCall(network, from.address, needed) });
    }
    lines.push({ asset: from, recipient, rawAmount: amountIn, call: this.dex.swapCall(network, route, amountIn, minOut, recipient, swapDeadline()) });
    // The first transaction may wait for another (a gas top-up of the sending address).
    lines[0].afterItemId = afterItemId;
    const { transferId, itemIds } = await this.transfers.enqueue(trx, wallet, network.blockchainId, 'swap', lines, status, requestedBy);
    const swapItemId = itemIds[itemIds.length - 1];
    if (itemIds.length > 1) await setItemPredecessor(trx, swapItemId, itemIds[0]);
    const [row] = await trx('swaps')
      .insert({
        organizationId: wallet.organizationId,
        masterWalletId: wallet.masterWalletId,
        addressId: wallet.addressId,
        blockchainId: network.blockchainId,
        fromAddress: wallet.address,
        recipient,
        srcAssetId: from.id,
        dstAssetId: to.id,
        inputRaw: amountIn.toString(),
        quotedOutputRaw: route.output.toString(),
        minOutputRaw: minOut.toString(),
        route: route.assets.map((a) => a.id),
        router,
        orderType: priced.order,
        slippageTolerance: formatScaled(priced.slippageBasisPoints, 2),
        priceImpact: formatScaled(priced.priceImpactPpm, 4),
        status,
        transferId,
        swapItemId,
      })
      .returning('id');
    return { swapId: (row as { id: string }).id, transferId, swapItemId };
  }

  /**
   * A swap held for approval (requireApprovalForTransfers) is approved (TransferService.onApproved,
   * in the approving transaction): its router call, set when it was queued and perhaps long ago, is
   * re-priced. The deadline starts again from now, and the minimum output becomes the stricter of
   * the one it was queued with and today's router output less the swap's slippage tolerance: a swap
   * approved after the market moved its way is not sent with a floor a sandwich could fill down to.
   */
  readonly approved = async (trx: Knex.Transaction, transfer: { kind: string; itemIds: string[] }): Promise<void> => {
    if (transfer.kind !== 'swap') return;
    const swap = await trx('swaps').whereIn('swapItemId', transfer.itemIds).first('id', 'swapItemId', 'blockchainId', 'inputRaw', 'minOutputRaw', 'slippageTolerance');
    if (!swap) return;
    const network = this.networks.get(swap.blockchainId);
    // The swap's item carries its router call.
    const callData = (await itemCallData(trx, swap.swapItemId)) as string;
    const now = network ? await this.dex.currentOutput(network, callData, BigInt(swap.inputRaw)).catch(() => null) : null;
    if (now === null) throw new KeelError('SERVICE_UNAVAILABLE', "The swap's router could not be read to price it again; nothing was approved, try again shortly");
    const slippageBasisPoints = BigInt(Math.round(Number(swap.slippageTolerance) * 100));
    const floor = (now * (10_000n - slippageBasisPoints)) / 10_000n;
    const minOut = floor > BigInt(swap.minOutputRaw) ? floor : BigInt(swap.minOutputRaw);
    await setItemCallData(trx, swap.swapItemId, this.dex.withTerms(callData, minOut, swapDeadline()));
    await trx('swaps').where({ id: swap.id }).update({ minOutputRaw: minOut.toString() });
  };

  async list(organizationId: string, args: SwapFilter): Promise<PageResult<SwapView>> {
    const masterWalletId = Ids.filter('masterWalletId', args.masterWalletId);
    const addressId = Ids.filter('addressId', args.addressId);
    const q = this.rows()
      .where({ organizationId })
      .modify((b) => {
        if (args.status) b.where({ currentStatus: args.status });
        if (masterWalletId) b.where({ masterWalletId });
        if (addressId) b.where({ addressId });
      });
    const { rows, total } = await fetchPage<Record<string, any>>(q, args, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(await this.views(rows), total, args);
  }

  async get(organizationId: string, id: string): Promise<SwapView> {
    id = Ids.uuid('Swap', id);
    const row = await this.rows().where({ id, organizationId }).first();
    if (!row) throw KeelError.notFound('Swap');
    return (await this.views([row]))[0];
  }

  /** Swaps with their current status (currentStatus), as one relation to filter and page. */
  private rows(): Knex.QueryBuilder {
    return this.db.from(this.db('swaps as s').join('transfers as t', 't.id', 's.transferId').select('s.*', this.db.raw(`${STATUS_SQL} as current_status`)).as('x'));
  }

  private async views(rows: Record<string, any>[]): Promise<SwapView[]> {
    const assets = await this.chains.assetViews(rows.flatMap((r) => [r.srcAssetId, r.dstAssetId, ...r.route]));
    return rows.map((r) => {
      const [from, to] = [assets.get(r.srcAssetId)!, assets.get(r.dstAssetId)!];
      return {
        id: r.id,
        status: r.currentStatus,
        masterWalletId: r.masterWalletId,
        addressId: r.addressId,
        blockchainId: r.blockchainId,
        fromAddress: r.fromAddress,
        recipient: r.recipient,
        fromAsset: from,
        toAsset: to,
        amount: formatScaled(BigInt(r.inputRaw), from.decimals),
        expectedOutput: formatScaled(BigInt(r.quotedOutputRaw), to.decimals),
        minimumOutput: formatScaled(BigInt(r.minOutputRaw), to.decimals),
        outputAmount: r.outputRaw === null ? null : formatScaled(BigInt(r.outputRaw), to.decimals),
        priceImpact: String(r.priceImpact),
        route: (r.route as string[]).map((id) => assets.get(id)?.symbol ?? id),
        order: r.orderType,
        slippageTolerance: String(r.slippageTolerance),
        transferId: r.transferId,
        txHash: r.txHash,
        gasFee: r.gasFee === null ? null : formatScaled(BigInt(r.gasFee), 18),
        error: r.error,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      };
    });
  }

  private async quoteView(p: PricedSwap, mayNeedApproval: boolean): Promise<SwapQuoteView> {
    const fees = await p.network.provider.getFeeData();
    const approvalLimit = mayNeedApproval ? APPROVAL_GAS : 0n;
    const gasFee = (p.route.gasLimit + approvalLimit) * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
    const hops = BigInt(p.route.path.length - 1);
    return {
      blockchainId: p.network.blockchainId,
      router: this.dex.router(p.network),
      fromAsset: p.from,
      toAsset: p.to,
      amount: formatScaled(p.amountIn, p.from.decimals),
      expectedOutput: formatScaled(p.route.output, p.to.decimals),
      minimumOutput: formatScaled(p.minOut, p.to.decimals),
      priceImpact: formatScaled(p.priceImpactPpm, 4),
      route: p.route.assets.map((a, i) => ({ assetId: a.id, symbol: a.symbol, tokenAddress: p.route.path[i] })),
      fee: { amount: formatScaled(p.feeRaw, p.from.decimals), asset: p.from, percent: formatScaled(1_000_000n - 997n ** hops * 1_000_000n / 1000n ** hops, 4) },
      gas: { limit: p.route.gasLimit.toString(), approvalLimit: approvalLimit.toString(), fee: formatScaled(gasFee, 18) },
      order: p.order,
      slippageTolerance: formatScaled(p.slippageBasisPoints, 2),
      quotedAt: new Date(),
    };
  }
}

/** A swap's status: its own once final, else its transfer's (PENDING_APPROVAL, QUEUED, SUBMITTED, REJECTED). */
const STATUS_SQL = `CASE WHEN s.status IN ('EXECUTED', 'FAILED') THEN s.status WHEN t.status = 'CONFIRMED' THEN 'SUBMITTED' WHEN t.status = 'FAILED' THEN 'FAILED' ELSE t.status END`;

/** The router refuses a swap signed after this: the window it waits for its approval line and confirmations in. */
function swapDeadline(): number {
  return Math.floor(Date.now() / 1000) + SWAP_DEADLINE_SECONDS;
}

export function parseOrder(text: string): SwapOrder {
  const order = text.toUpperCase() as SwapOrder;
  if (!SWAP_ORDERS.includes(order)) throw KeelError.invalidField('order', `must be one of ${SWAP_ORDERS.join(', ')}`);
  return order;
}

/** Percent to hundredths (zeros past them change nothing), 0 to 50, as basis points. */
export function parseSlippage(text: string): bigint {
  return parsePercent('slippageTolerance', text, MAX_SLIPPAGE_BASIS_POINTS);
}

/** A percentage field to hundredths (zeros past them change nothing), from 0 to `max` basis points, as basis points. */
function parsePercent(field: string, text: string, max: bigint): bigint {
  const bp = parseUnits(text, 2);
  if (bp === null || bp < 0n || bp > max) throw KeelError.invalidField(field, `${exactInDecimals(2, { what: `a percentage from 0 to ${formatScaled(max, 2)}` })}, e.g. "0.5"`);
  return bp;
}

