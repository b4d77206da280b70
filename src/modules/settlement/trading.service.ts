import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';
import { exactInDecimals, formatScaled, parseUnits } from '../../platform/decimal';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import { toPage, PageResult, PageWindow } from '../../platform/paging';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import type { Outbox } from '../../platform/events/outbox';
import type { ChainNetwork, ChainNetworks, AssetView, ChainService } from '../chains';
import { refuseUnlessEvm } from '../chains';
import type { LedgerService } from '../ledger';
import type { SendingWallet, SendingWallets } from '../wallets';
import type { QueuedLine, TransferService, GasTopUps, SettlementContractGuard } from '../withdrawals';
import { checkFourEyes, checkSanctions, checkTransferPolicy, RecipientScreen, checksummedAddress, setItemPredecessor } from '../withdrawals';
import { readBalances } from '../../platform/chain-port/evm-chain';
import type { SettlementDeployments } from './settlement-deployments';
import type { TradingExits } from './trading-exits';
import { settlementInterface } from './settlement-contract';
import { checkedPermit } from './token-permits';
import { withheldProceeds } from './unsettled-trades';
import { TRADING_TRANSFER_EVENT, TradingDirection, TradingTransferStatus } from './trading.domain';
import { lockUntilCommit } from '../../platform/db/advisory-lock';

const erc20 = new ethers.Interface(['function allowance(address,address) view returns (uint256)', 'function approve(address,uint256) returns (bool)']);

/** Gas a deposit to trading may use: an ERC-20 approval or a permit (when needed) and the deposit call, with room to spare. */
export const APPROVAL_GAS = 80_000n;
export const DEPOSIT_GAS = 120_000n;

export interface TradingDepositInput {
  assetId: string;
  /** Whole units of the asset. */
  amount: string;
  /**
   * Whole units of the chain's coin deposited to trading in the same transaction as a token (a
   * trading transfer of its own, with the same transferId): one transaction instead of two.
   */
  coinAmount?: string | null;
  /** A wallet of the organisation (master wallet or deposit address) that pays the deposit's gas when the wallet lacks it. */
  gasSponsorWalletId?: string | null;
}

export interface TradingWithdrawalInput {
  assetId: string;
  amount: string;
  /** Where the contract pays out: the wallet's own address when absent (back to custody). */
  recipient?: string | null;
}

export interface TradingTransferFilter extends PageWindow {
  walletId?: string;
  direction?: TradingDirection;
  status?: TradingTransferStatus;
}

export interface TradingTransferView {
  id: string;
  direction: TradingDirection;
  status: TradingTransferStatus;
  walletId: string;
  walletAddress: string;
  blockchainId: string;
  asset: AssetView;
  amount: string;
  rawAmount: string;
  recipient: string;
  /** DEPOSIT: the transfer (kind trading_deposit) whose lines call the contract from the wallet. */
  transferId: string | null;
  gasSponsorWalletId: string | null;
  /** WITHDRAWAL: the operator's transaction that pays it out. */
  txHash: string | null;
  blockNumber: string | null;
  failureReason: string | null;
  /** WITHDRAWAL: the API key that asked for it (an access token counts as its issuing key); null for a deposit. */
  requestedBy: string | null;
  /** The key that approved or rejected a withdrawal held for approval. */
  decidedBy: string | null;
  decidedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A wallet's trading balance of one asset: in the settlement contract, as the ledger keeps it. */
export interface TradingBalanceView {
  walletId: string;
  assetId: string;
  symbol: string;
  /** What orders and withdrawals may take now: nothing while a debt stands in the asset. */
  available: string;
  /** What the trading account owes in the asset ("0" when nothing): a reorg took back a refund already spent or locked. Repaid by its next credits. */
  debt: string;
  /** Held by open orders. */
  locked: string;
  /** Deposits to trading sent from the wallet, not yet confirmed (not tradable yet). */
  pendingDeposit: string;
  /** Withdrawals from trading taken from the balance, not yet confirmed on chain. */
  pendingWithdrawal: string;
  /** Proceeds of trades not yet CONFIRMED on chain: part of available, not withdrawable until settled. */
  unsettledProceeds: string;
}

type Row = Record<string, any>;

/** A deposit to trading checked against the chain, ready to record. */
interface CheckedDeposit {
  wallet: SendingWallet;
  asset: AssetView;
  network: ChainNetwork;
  contract: string;
  rawAmount: bigint;
  /** The chain's coin deposited with a token in the same transaction. */
  coin: { asset: AssetView; rawAmount: bigint } | null;
  /** The contract may not take the token yet: an approval first, or the permit when the token has EIP-2612. */
  approval: { to: string; data: string; value: bigint } | null;
  permit: { deadline: bigint; v: number; r: string; s: string } | null;
  sponsor: SendingWallet | null;
  gasCost: bigint;
  reservedCoin: bigint;
}

/**
 * A wallet's trading balance, held in the settlement contract: deposits to it (an on-chain deposit
 * from the wallet's address, sent by the transaction sender, with its gas paid by the wallet or a
 * sponsor wallet the organisation names), withdrawals from it (taken from the ledger at once,
 * signed by the wallet's key and paid out by the operator, see TradingWithdrawalSender), and the
 * balance as the API shows it.
 */
export class TradingService {
  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly transfers: TransferService,
    private readonly gasTopUps: GasTopUps,
    private readonly ledger: LedgerService,
    private readonly deployments: SettlementDeployments,
    private readonly exits: Pick<TradingExits, 'exitsOf'>,
    private readonly sanctions: RecipientScreen,
    private readonly settlementContracts: SettlementContractGuard,
    private readonly outbox: Outbox,
    private readonly uow: UnitOfWork,
  ) {}

  /**
   * Moves `amount` from the wallet's custody (its address) into its trading balance: taken from the
   * custody ledger now, sent to the contract by the transaction sender (for an ERC-20 the contract
   * may not take yet, the wallet's EIP-2612 permit in the deposit's transaction, or an approval
   * first when the token has none; `coinAmount` of the coin in the same transaction), credited to
   * trading once the deposit is CONFIRMED. A
   * wallet without the coin for the gas is refused (INSUFFICIENT_FUNDS) unless `gasSponsorWalletId`
   * names a wallet that pays it (a gas top-up the deposit waits for). A wallet that asked to exit
   * the chain's contract is refused (TRADING_EXIT_REQUESTED) before anything moves.
   */
  async deposit(organizationId: string, walletId: string, input: TradingDepositInput): Promise<TradingTransferView> {
    const id = await this.uow.runChecked(
      'trading.deposit',
      async () => {
        const wallet = await this.wallet(organizationId, walletId);
        const sponsor = input.gasSponsorWalletId ? await this.wallet(organizationId, input.gasSponsorWalletId, 'gasSponsorWalletId') : null;
        return this.checkDeposit(wallet, input, sponsor);
      },
      (trx, checked) => this.enqueueDeposit(trx, checked, false),
    );
    return this.get(organizationId, id);
  }

  /**
   * A deposit `keel settlement migrate` makes for a balance the trading ledger already counts (from
   * before the contract held trading balances): the amount is credited to custody and deposited
   * from there, and not credited to trading again when it is confirmed (a failure takes the custody
   * credit back). The trading transfer's id.
   */
  async migrationDeposit(wallet: SendingWallet, input: { assetId: string; amount: string }, sponsor: SendingWallet | null, reservedCoin: bigint): Promise<string> {
    const checked = await this.checkDeposit(wallet, input, sponsor, reservedCoin);
    return this.db.transaction(async (trx) => {
      const id = randomUUID();
      await this.ledger.credit(trx, { organizationId: wallet.organizationId, walletId: wallet.addressId ?? wallet.masterWalletId, assetId: checked.asset.id, amount: checked.rawAmount, reference: `trading-migration:${id}`, account: 'custody' });
      return this.enqueueDeposit(trx, checked, true, id);
    });
  }

  /** `reservedCoin`: coin at the wallet's address that is not the wallet's to spend on gas (a migration's trading balance still there). */
  private async checkDeposit(wallet: SendingWallet, input: { assetId: string; amount: string; coinAmount?: string | null }, sponsor: SendingWallet | null, reservedCoin = 0n): Promise<CheckedDeposit> {
    const { asset, network, contract, rawAmount } = await this.priced(wallet, input);
    await this.refuseIfExiting(wallet, network);
    if (sponsor && !sponsor.blockchainIds.includes(network.blockchainId)) throw KeelError.invalidField('gasSponsorWalletId', 'the sponsor wallet is not enabled on the chain of this asset');
    const coin = input.coinAmount ? await this.coinWith(asset, input.coinAmount) : null;
    const [held] = await readBalances(network.provider, wallet.address, [asset]);
    if (held < rawAmount) throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds ${formatScaled(held, asset.decimals)} ${asset.symbol}`, { assetId: asset.id, available: formatScaled(held, asset.decimals), required: input.amount });
    const approval = asset.isNative ? null : await this.approvalCall(network, asset, wallet.address, contract, rawAmount);
    // A token with EIP-2612 needs no approval transaction: the wallet's permit rides in the deposit's (see enqueueDeposit for when it is used).
    const signer = () => this.wallets.signer(wallet.organizationId, wallet.masterWalletId, wallet.addressId);
    const permit = approval ? await checkedPermit(network.provider, signer, asset.address, network.spec.chainId, wallet.address, contract, rawAmount) : null;
    const fees = await network.provider.getFeeData();
    const gasCost = ((approval ? APPROVAL_GAS : 0n) + DEPOSIT_GAS) * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
    const ownCoin = reservedCoin + (asset.isNative ? rawAmount : 0n) + (coin?.rawAmount ?? 0n);
    if (!sponsor) {
      const [held] = await readBalances(network.provider, wallet.address, [{ isNative: true, address: ethers.ZeroAddress }]);
      const left = held - ownCoin;
      if (left < gasCost) {
        throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} holds ${formatScaled(left > 0n ? left : 0n, 18)} of the chain's coin beside the deposit; the deposit's gas may cost ${formatScaled(gasCost, 18)}. Name a gasSponsorWalletId to pay it`, {
          fields: [{ field: 'gasSponsorWalletId', error: 'INSUFFICIENT_FUNDS' }],
        });
      }
    }
    return { wallet, asset, network, contract, rawAmount, coin, approval, permit, sponsor, gasCost, reservedCoin };
  }

  /**
   * A wallet that asked to exit the chain's settlement contract deposits no more to it: it places no
   * orders there (orders' placement checks), so a deposit would only sit in a contract it cannot
   * trade from, to be taken out again by `keel settlement exit`. The contract cannot take a request
   * back, so neither does this refusal (its details as the order refusal's, with the chain).
   */
  private async refuseIfExiting(wallet: SendingWallet, network: ChainNetwork): Promise<void> {
    const walletId = wallet.addressId ?? wallet.masterWalletId;
    const exit = (await this.exits.exitsOf(network.blockchainId, [walletId])).get(walletId);
    if (!exit) return;
    throw new KeelError(
      'TRADING_EXIT_REQUESTED',
      `The wallet has asked to exit the settlement contract of ${network.spec.name} (its balance may leave the contract from ${exit.availableAt.toISOString()}): it deposits no more to trading on the chain. Withdrawals from its trading balance still work`,
      { walletId, blockchainId: network.blockchainId, requestedAt: exit.requestedAt.toISOString(), availableAt: exit.availableAt.toISOString() },
    );
  }

  /** The chain's coin deposited with a token (`coinAmount`): refused with the coin itself, which is deposited alone. */
  private async coinWith(asset: AssetView, coinAmount: string): Promise<{ asset: AssetView; rawAmount: bigint }> {
    if (asset.isNative) throw KeelError.invalidField('coinAmount', "goes with a token's deposit; the coin alone is deposited with its own assetId");
    const native = (await this.chains.assetsOf(asset.blockchainId)).find((a) => a.isNative);
    if (!native) throw new KeelError('INVALID_NETWORK', 'The chain has no native coin registered');
    const view = (await this.chains.assetViews([native.id])).get(native.id)!;
    const rawAmount = parseUnits(coinAmount, view.decimals);
    if (rawAmount === null) throw KeelError.invalidField('coinAmount', exactInDecimals(view.decimals, { of: view.symbol }));
    if (rawAmount <= 0n) throw KeelError.invalidField('coinAmount', 'must be above 0');
    return { asset: view, rawAmount };
  }

  /**
   * Records the deposit's transfer and its trading transfer (and the coin's, when `coinAmount` rides
   * with a token): a gas top-up first when sponsored, then, for a token the contract may not take
   * yet, one transaction `depositWithCoin` carrying the wallet's EIP-2612 permit, or an approval
   * and the deposit (a token without permit), each waiting for the one before. A permit is signed
   * for the token's next nonce, so it is used only when no other deposit of the token from the
   * wallet is on its way (decided one at a time per address); otherwise the deposit approves, after
   * that one (whose permit would set the allowance back to its own amount).
   */
  private async enqueueDeposit(trx: Knex.Transaction, c: CheckedDeposit, migration: boolean, id: string = randomUUID()): Promise<string> {
    const ledgerWallet = c.wallet.addressId ?? c.wallet.masterWalletId;
    await lockUntilCommit(trx, [`trading-deposit:${c.network.blockchainId}:${c.wallet.address.toLowerCase()}`]);
    const inFlight = c.approval
      ? await trx('tradingTransfers').where({ blockchainId: c.network.blockchainId, walletId: ledgerWallet, assetId: c.asset.id, direction: 'DEPOSIT', status: 'PENDING' }).orderBy('createdAt', 'desc').first('depositItemId')
      : undefined;
    const permit = inFlight ? null : c.permit;
    const topUp = c.sponsor ? await this.gasTopUps.ensure(trx, c.wallet, c.network, c.gasCost + c.reservedCoin + (c.asset.isNative ? c.rawAmount : 0n) + (c.coin?.rawAmount ?? 0n), { payer: c.sponsor }) : null;
    const lines: QueuedLine[] = [];
    if (c.approval && !permit) lines.push({ asset: c.asset, recipient: c.contract, rawAmount: 0n, call: c.approval });
    lines.push({ asset: c.asset, recipient: c.contract, rawAmount: c.rawAmount, call: depositCall(c, permit) });
    lines[0].afterItemId = inFlight?.depositItemId ?? topUp ?? undefined;
    const { transferId, itemIds } = await this.transfers.enqueue(trx, c.wallet, c.network.blockchainId, 'trading_deposit', lines);
    const depositItemId = itemIds[itemIds.length - 1];
    if (itemIds.length > 1) await setItemPredecessor(trx, depositItemId, itemIds[0]);
    const gasSponsorWalletId = c.sponsor ? (c.sponsor.addressId ?? c.sponsor.masterWalletId) : null;
    await trx('tradingTransfers').insert({ ...this.rowOf(id, c.wallet, c.network.blockchainId, c.asset, 'DEPOSIT', c.rawAmount, c.contract, 'PENDING'), transferId, depositItemId, gasSponsorWalletId, migration });
    await this.publish(trx, id, 'requested');
    if (c.coin) {
      // The coin rides in the token's transaction: taken from custody here (the transfer line takes the token), given back if the line fails (TradingDepositOutcomes).
      const coinId = randomUUID();
      const spendable = await this.ledger.spendable(trx, ledgerWallet, c.coin.asset.id, 'custody');
      if (spendable < c.coin.rawAmount) throw new KeelError('INSUFFICIENT_FUNDS', `The custody ledger holds ${formatScaled(spendable > 0n ? spendable : 0n, c.coin.asset.decimals)} ${c.coin.asset.symbol} the wallet may spend`, { walletId: ledgerWallet, assetId: c.coin.asset.id });
      await this.ledger.debit(trx, { organizationId: c.wallet.organizationId, walletId: ledgerWallet, assetId: c.coin.asset.id, amount: c.coin.rawAmount, reference: `trading-deposit-coin:${coinId}`, account: 'custody' });
      await trx('tradingTransfers').insert({ ...this.rowOf(coinId, c.wallet, c.network.blockchainId, c.coin.asset, 'DEPOSIT', c.coin.rawAmount, c.contract, 'PENDING'), transferId, depositItemId, gasSponsorWalletId, migration });
      await this.publish(trx, coinId, 'requested');
    }
    return id;
  }

  /**
   * Takes `amount` from the wallet's trading balance at once (INSUFFICIENT_FUNDS when what is
   * available, less proceeds of trades not yet settled on chain, is short) and queues its payout
   * from the contract to the wallet's own address (back to custody) or `recipient`. As a transfer
   * is: recipients screened against the sanctions lists, an external one within the wallet's
   * security policy (allowedRecipients, limits), and held for approval under
   * requireApprovalForTransfers (a payout to the wallet's own address moves nothing out of it, so
   * it is not held), where another key than `requestedBy`, the API key that asks, must approve it.
   */
  async withdraw(organizationId: string, requestedBy: string, walletId: string, input: TradingWithdrawalInput): Promise<TradingTransferView> {
    const id = await this.uow.runChecked(
      'trading.withdraw',
      async () => {
        const wallet = await this.wallet(organizationId, walletId);
        const { asset, network, rawAmount } = await this.priced(wallet, input);
        const recipient = input.recipient ? checksummedAddress(input.recipient, 'recipient') : ethers.getAddress(wallet.address);
        const own = recipient.toLowerCase() === wallet.address.toLowerCase();
        checkSanctions(this.sanctions, [{ recipient }]);
        await this.settlementContracts.check(network.blockchainId, recipient, 'recipient');
        if (!own) checkTransferPolicy(wallet.configurations.security, [{ asset, recipient, rawAmount }]);
        const status: TradingTransferStatus = !own && wallet.configurations.security.requireApprovalForTransfers ? 'PENDING_APPROVAL' : 'PENDING';
        return { wallet, asset, network, rawAmount, recipient, status };
      },
      async (trx, c) => {
        const ledgerWallet = c.wallet.addressId ?? c.wallet.masterWalletId;
        // The balance row first: withdrawals of one wallet are decided one at a time.
        await trx('ledgerBalances').where({ walletId: ledgerWallet, assetId: c.asset.id, account: 'trading' }).forUpdate().first();
        const available = await this.ledger.spendable(trx, ledgerWallet, c.asset.id, 'trading');
        const withdrawable = available - ((await withheldProceeds(trx, { walletId: ledgerWallet, assetId: c.asset.id })).get(`${ledgerWallet}|${c.asset.id}`) ?? 0n);
        if (withdrawable < c.rawAmount) {
          throw new KeelError('INSUFFICIENT_FUNDS', `The trading balance has ${formatScaled(withdrawable > 0n ? withdrawable : 0n, c.asset.decimals)} ${c.asset.symbol} that may leave (what open orders hold, and proceeds of trades not yet settled on chain, cannot)`, {
            walletId: ledgerWallet,
            assetId: c.asset.id,
          });
        }
        const id = randomUUID();
        await trx('tradingTransfers').insert({ ...this.rowOf(id, c.wallet, c.network.blockchainId, c.asset, 'WITHDRAWAL', c.rawAmount, c.recipient, c.status), requestedBy });
        await this.ledger.debit(trx, { organizationId, walletId: ledgerWallet, assetId: c.asset.id, amount: c.rawAmount, reference: `trading-withdrawal:${id}`, account: 'trading' });
        await this.publish(trx, id, c.status === 'PENDING_APPROVAL' ? 'pending_approval' : 'requested');
        return id;
      },
    );
    return this.get(organizationId, id);
  }

  /**
   * The API key `decidedBy` releases (screened again) or refuses a withdrawal held for approval; a
   * refused one goes back to the trading balance. Four eyes, as on a held transfer: the key that
   * asked for it may refuse it but not release it.
   */
  async decideWithdrawal(organizationId: string, decidedBy: string, id: string, approve: boolean): Promise<TradingTransferView> {
    id = Ids.uuid('Trading transfer', id);
    await this.uow.run(approve ? 'trading.approve' : 'trading.reject', async (trx) => {
      const row = await trx('tradingTransfers').where({ id, organizationId }).forUpdate().first();
      if (!row) throw KeelError.notFound('Trading transfer');
      if (row.status !== 'PENDING_APPROVAL') throw new KeelError('CONFLICT', `The trading transfer is ${row.status}, not waiting for approval`);
      checkFourEyes(row.requestedBy, decidedBy, approve);
      if (approve) {
        checkSanctions(this.sanctions, [{ recipient: row.recipient }]);
        await trx('tradingTransfers').where({ id }).update({ status: 'PENDING', decidedBy, decidedAt: trx.fn.now(), updatedAt: trx.fn.now() });
        await this.publish(trx, id, 'approved');
      } else {
        await trx('tradingTransfers').where({ id }).update({ status: 'REJECTED', decidedBy, decidedAt: trx.fn.now(), updatedAt: trx.fn.now() });
        await this.ledger.credit(trx, { organizationId, walletId: row.walletId, assetId: row.assetId, amount: BigInt(row.rawAmount), reference: `trading-withdrawal-refund:${id}`, account: 'trading' });
        await this.publish(trx, id, 'rejected');
      }
    });
    return this.get(organizationId, id);
  }

  async get(organizationId: string, id: string): Promise<TradingTransferView> {
    id = Ids.uuid('Trading transfer', id);
    const row = await this.db('tradingTransfers').where({ id, organizationId }).first();
    if (!row) throw KeelError.notFound('Trading transfer');
    return (await this.views([row]))[0];
  }

  async list(organizationId: string, filter: TradingTransferFilter): Promise<PageResult<TradingTransferView>> {
    const walletId = Ids.filter('walletId', filter.walletId);
    const q = this.db('tradingTransfers')
      .where({ organizationId })
      .modify((b) => {
        if (walletId) b.where({ walletId });
        if (filter.direction) b.where({ direction: filter.direction });
        if (filter.status) b.where({ status: filter.status });
      });
    const { rows, total } = await fetchPage<Row>(q, filter, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(await this.views(rows), total, filter);
  }

  /** The wallet's trading balance per asset (available as the ledger lets it be spent, debt, locked in orders, pending deposit, pending withdrawal, unsettled proceeds). */
  async balances(organizationId: string, walletId: string): Promise<TradingBalanceView[]> {
    if (!Ids.isUuid(walletId)) throw KeelError.notFound('Wallet');
    const id = walletId.toLowerCase();
    await this.ledger.assertWallet(organizationId, id);
    const held = new Map((await this.ledger.balances(id, this.db, 'trading')).map((b) => [b.assetId, b]));
    const pending: { assetId: string; direction: TradingDirection; total: string }[] = await this.db('tradingTransfers')
      .where({ walletId: id, organizationId })
      .where((q) => q.where({ direction: 'DEPOSIT', status: 'PENDING' }).orWhere((w) => w.where({ direction: 'WITHDRAWAL' }).whereIn('status', ['PENDING_APPROVAL', 'PENDING', 'SUBMITTED'])))
      .groupBy('assetId', 'direction')
      .select('assetId', 'direction', this.db.raw('sum(raw_amount)::text AS total'));
    const unsettled = await withheldProceeds(this.db, { walletId: id });
    const assetIds = [...new Set([...held.keys(), ...pending.map((p) => p.assetId)])].sort();
    const assets = await this.chains.assetViews(assetIds);
    return assetIds.map((assetId) => {
      const decimals = assets.get(assetId)?.decimals ?? 0;
      const sum = (direction: TradingDirection) => BigInt(pending.find((p) => p.assetId === assetId && p.direction === direction)?.total ?? 0);
      const proceeds = unsettled.get(`${id}|${assetId}`) ?? 0n;
      const b = held.get(assetId);
      return {
        walletId: id,
        assetId,
        symbol: assets.get(assetId)?.symbol ?? '',
        available: formatScaled(b?.spendable ?? 0n, decimals),
        debt: formatScaled(b?.debt ?? 0n, decimals),
        locked: formatScaled(b?.locked ?? 0n, decimals),
        pendingDeposit: formatScaled(sum('DEPOSIT'), decimals),
        pendingWithdrawal: formatScaled(sum('WITHDRAWAL'), decimals),
        unsettledProceeds: formatScaled(proceeds, decimals),
      };
    });
  }

  /** A master wallet or deposit address of the organisation (404 otherwise, naming `field` when it is not the path's). */
  async wallet(organizationId: string, walletId: string, field?: string): Promise<SendingWallet> {
    const notFound = () => (field ? KeelError.invalidField(field, 'no such wallet of the organisation') : KeelError.notFound('Wallet'));
    if (!Ids.isUuid(walletId)) throw notFound();
    const id = walletId.toLowerCase();
    for (const source of [{ masterWalletId: id }, { addressId: id }]) {
      try {
        return await this.wallets.resolve(organizationId, source);
      } catch (e) {
        if (!(e instanceof KeelError && e.status === 404)) throw e;
      }
    }
    throw notFound();
  }

  private async priced(wallet: SendingWallet, input: { assetId: string; amount: string }): Promise<{ asset: AssetView; network: ChainNetwork; contract: string; rawAmount: bigint }> {
    const asset = Ids.isUuid(input.assetId) ? (await this.chains.assetViews([input.assetId.toLowerCase()])).get(input.assetId.toLowerCase()) : undefined;
    if (!asset || !asset.isActive) throw KeelError.invalidField('assetId', 'unknown asset');
    // The one branch on the family here: the order book settles through an EVM contract, EVM-only (issue 35).
    refuseUnlessEvm(asset.blockchain, 'orderBookSettlement', 'assetId');
    const network = this.networks.get(asset.blockchainId);
    if (!network || !wallet.blockchainIds.includes(asset.blockchainId)) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on the chain of this asset');
    const contract = await this.deployments.address(asset.blockchainId);
    if (!contract) throw new KeelError('INVALID_NETWORK', 'Trades do not settle on this chain: it has no settlement contract');
    const rawAmount = parseUnits(input.amount, asset.decimals);
    if (rawAmount === null) throw KeelError.invalidField('amount', exactInDecimals(asset.decimals, { of: asset.symbol }));
    if (rawAmount <= 0n) throw KeelError.invalidField('amount', 'must be above 0');
    return { asset, network, contract: ethers.getAddress(contract), rawAmount };
  }

  /**
   * The approval the deposit needs first, or null when the contract may already take it. Unlimited:
   * deposits of one wallet may wait in the sender's queue together, and an exact approval would be
   * overwritten by the next (the contract only ever takes what a deposit call names, for the wallet).
   */
  private async approvalCall(network: ChainNetwork, asset: AssetView, owner: string, contract: string, rawAmount: bigint): Promise<{ to: string; data: string; value: bigint } | null> {
    const allowance: bigint = await new ethers.Contract(asset.address, erc20, network.provider).allowance(owner, contract);
    if (allowance >= rawAmount && allowance >= ethers.MaxUint256 / 2n) return null;
    return { to: ethers.getAddress(asset.address), data: erc20.encodeFunctionData('approve', [contract, ethers.MaxUint256]), value: 0n };
  }

  private rowOf(id: string, wallet: SendingWallet, blockchainId: string, asset: AssetView, direction: TradingDirection, rawAmount: bigint, recipient: string, status: TradingTransferStatus): Row {
    return {
      id,
      organizationId: wallet.organizationId,
      blockchainId,
      masterWalletId: wallet.masterWalletId,
      addressId: wallet.addressId,
      walletId: wallet.addressId ?? wallet.masterWalletId,
      walletAddress: ethers.getAddress(wallet.address),
      assetId: asset.id,
      direction,
      rawAmount: rawAmount.toString(),
      recipient,
      status,
    };
  }

  private async publish(trx: Knex.Transaction, id: string, what: string): Promise<void> {
    const row = await trx('tradingTransfers').where({ id }).first();
    await this.outbox.publish(trx, { organizationId: row.organizationId, type: `${TRADING_TRANSFER_EVENT}.${what}`, data: eventData(row) });
  }

  private async views(rows: Row[]): Promise<TradingTransferView[]> {
    const assets = await this.chains.assetViews([...new Set(rows.map((r) => r.assetId))]);
    return rows.map((r) => tradingTransferView(r, assets.get(r.assetId)!));
  }
}

export function eventData(row: Row): Record<string, unknown> {
  return { id: row.id, direction: row.direction, status: row.status, walletId: row.walletId, assetId: row.assetId, rawAmount: String(row.rawAmount), recipient: row.recipient, txHash: row.txHash ?? null, failureReason: row.failureReason ?? null };
}

function tradingTransferView(r: Row, asset: AssetView): TradingTransferView {
  return {
    id: r.id,
    direction: r.direction,
    status: r.status,
    walletId: r.walletId,
    walletAddress: r.walletAddress,
    blockchainId: r.blockchainId,
    asset,
    amount: formatScaled(BigInt(r.rawAmount), asset.decimals),
    rawAmount: String(r.rawAmount),
    recipient: r.recipient,
    transferId: r.transferId,
    gasSponsorWalletId: r.gasSponsorWalletId,
    txHash: r.txHash,
    blockNumber: r.blockNumber === null ? null : String(r.blockNumber),
    failureReason: r.failureReason,
    requestedBy: r.requestedBy,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/**
 * The deposit line's call: `depositNative()` for the coin; for a token `depositWithCoin` when a
 * permit or the coin rides with it (one transaction), else `deposit(token, amount)` (under an
 * approval, the cheapest call).
 */
function depositCall(c: CheckedDeposit, permit: CheckedDeposit['permit']): { to: string; data: string; value: bigint } {
  const settlement = settlementInterface();
  if (c.asset.isNative) return { to: c.contract, data: settlement.encodeFunctionData('depositNative'), value: c.rawAmount };
  const token = ethers.getAddress(c.asset.address);
  if (!permit && !c.coin) return { to: c.contract, data: settlement.encodeFunctionData('deposit', [token, c.rawAmount]), value: 0n };
  const signed = permit ?? { deadline: 0n, v: 0, r: ethers.ZeroHash, s: ethers.ZeroHash };
  return { to: c.contract, data: settlement.encodeFunctionData('depositWithCoin', [token, c.rawAmount, signed.deadline, signed.v, signed.r, signed.s]), value: c.coin?.rawAmount ?? 0n };
}
