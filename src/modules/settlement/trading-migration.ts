import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import { shownReason } from '../../platform/shown-reason';
import { formatScaled } from '../../platform/decimal';
import { assetsOfChain, type ChainNetwork } from '../chains';
import { balanceTotals } from '../ledger';
import { walletAccounts, type SendingWallets } from '../wallets';
import type { SettlementDeployments } from './settlement-deployments';
import { NATIVE_TOKEN, revertReason, settlementInterface } from './settlement-contract';
import type { TradingService } from './trading.service';
import { contractMustHold } from './netting';
import { unsettledDeltas } from './unsettled-trades';

/** The one call of the contract before trading balances that the migration still makes: the operator hands balances back to their owners. */
const previousContract = new ethers.Interface(['function balanceOf(address token, address account) view returns (uint256)', 'function release(address[] accounts, address[] tokens)']);

/** What one wallet and asset needed in the contract, and what the migration did about it. */
export interface MigrationLine {
  walletId: string;
  address: string;
  symbol: string;
  /** Base units the trading ledger counts (less trades not settled yet) and the contract lacked. */
  lacking: string;
  /** The deposit made for it (a trading transfer id), or why none was. */
  depositId: string | null;
  refused: string | null;
}

export interface MigrationReport {
  blockchainId: string;
  contract: string;
  /** The transaction that handed back what the previous contract still held, if it held anything. */
  previousReleaseTxHash: string | null;
  lines: MigrationLine[];
}

/**
 * `keel settlement migrate`: moves a deployment that settled with per-batch funding (trading
 * balances at the wallets' addresses, the ledger's rows all in 'trading' since migration 030) to
 * trading balances held in the contract. Run with the settlement worker stopped and no batch in
 * flight (it refuses otherwise); it can be run again until every line is deposited:
 *
 * 1. What the previous contract (`settlement_contracts.previous_address`, kept by
 *    `keel settlement deploy`) still holds for Keel's wallets is released to their addresses
 *    (the old contract's `release`, by the operator).
 * 2. Each wallet and asset whose trading ledger (less trades not yet settled, so that trades
 *    queued under the old flow settle once, from the contract) exceeds what the contract holds
 *    and what migration deposits already on their way bring, gets a deposit of the difference
 *    from its address (TradingService.migrationDeposit: not credited to trading twice), its gas
 *    paid by the wallet or `gasSponsorWalletId`. A wallet the chain cannot take it from is
 *    listed with the reason: nothing is lost or counted twice, and `keel reconcile` shows it.
 */
export class TradingMigration {
  constructor(
    private readonly db: Knex,
    private readonly deployments: SettlementDeployments,
    private readonly trading: TradingService,
    private readonly wallets: SendingWallets,
    private readonly logger: Logger,
  ) {}

  async migrate(network: ChainNetwork, opts: { gasSponsorWalletId?: string } = {}): Promise<MigrationReport> {
    const d = await this.deployments.get(network);
    if (!d) throw new Error('the chain has no settlement contract and operator key: deploy the contract first (keel settlement deploy)');
    const inFlight = await this.db('settlement_batches').where({ blockchainId: network.blockchainId }).whereIn('status', ['BATCHED', 'SUBMITTED', 'REORGED', 'REPLACED']).count({ n: '*' });
    if (Number(inFlight[0].n) > 0) throw new Error('batches of the chain are still in flight under the previous flow: let the previous settlement worker finish them first');
    const row = await this.db('settlement_contracts').where({ blockchainId: network.blockchainId }).first();
    const assets = await assetsOfChain(this.db, network.blockchainId);
    const token = (a: { address: string; isNative: boolean }) => (a.isNative ? NATIVE_TOKEN : ethers.getAddress(a.address));
    const rows = await balanceTotals(this.db, assets.map((a) => a.id), { account: 'trading' });
    const accounts = await walletAccounts(this.db, rows.map((r) => r.walletId));

    const previousReleaseTxHash = row?.previousAddress ? await this.releasePrevious(network, d.operator, row.previousAddress, [...accounts.values()].map((a) => a.address), assets.map(token)) : null;
    // The previous contract holds nothing more for Keel's wallets: `keel settlement deploy` may replace the current one.
    if (row?.previousAddress) await this.db('settlement_contracts').where({ blockchainId: network.blockchainId, previousAddress: row.previousAddress }).update({ previousReleasedAt: this.db.fn.now() });

    const sponsorOf = async (organizationId: string) => (opts.gasSponsorWalletId ? this.trading.wallet(organizationId, opts.gasSponsorWalletId, 'gasSponsorWalletId').catch(() => null) : null);
    const contract = new ethers.Contract(d.address, settlementInterface(), network.provider);
    const unsettled = await unsettledDeltas(this.db, { blockchainId: network.blockchainId });
    const lacking = async (r: { walletId: string; assetId: string; total: string }, address: string) => {
      const asset = assets.find((a) => a.id === r.assetId)!;
      const pending = await this.db('tradingTransfers').where({ walletId: r.walletId, assetId: r.assetId, direction: 'DEPOSIT', status: 'PENDING', migration: true }).sum({ total: 'rawAmount' });
      const expected = contractMustHold(BigInt(r.total), unsettled.get(`${r.walletId}|${r.assetId}`) ?? { net: 0n, lowest: 0n });
      const held: bigint = await contract.balanceOf(token(asset), address);
      return expected - held - BigInt(pending[0].total ?? 0);
    };
    // The coin each wallet's trading balance still has at its address: it goes to the contract, not to gas.
    const native = assets.find((a) => a.isNative);
    const coinLacking = new Map<string, bigint>();
    for (const r of rows.filter((x) => x.assetId === native?.id && accounts.has(x.walletId))) coinLacking.set(r.walletId, await lacking(r, accounts.get(r.walletId)!.address));
    const lines: MigrationLine[] = [];
    for (const r of rows) {
      const account = accounts.get(r.walletId);
      const asset = assets.find((a) => a.id === r.assetId)!;
      if (!account) continue;
      const missing = asset.isNative ? (coinLacking.get(r.walletId) ?? 0n) : await lacking(r, account.address);
      if (missing <= 0n) continue;
      const reservedCoin = asset.isNative ? 0n : (coinLacking.get(r.walletId) ?? 0n) > 0n ? coinLacking.get(r.walletId)! : 0n;
      const line: MigrationLine = { walletId: r.walletId, address: account.address, symbol: asset.symbol, lacking: missing.toString(), depositId: null, refused: null };
      try {
        const wallet = await this.wallets.resolve(account.organizationId, account.addressId ? { addressId: account.addressId } : { masterWalletId: account.masterWalletId });
        line.depositId = await this.trading.migrationDeposit(wallet, { assetId: asset.id, amount: formatScaled(missing, asset.decimals) }, await sponsorOf(account.organizationId), reservedCoin);
      } catch (e) {
        line.refused = shownReason(e);
        this.logger.warn({ walletId: r.walletId, symbol: asset.symbol, err: e }, 'settlement migrate: the wallet\'s trading balance could not be deposited');
      }
      lines.push(line);
    }
    return { blockchainId: network.blockchainId, contract: d.address, previousReleaseTxHash, lines };
  }

  /** The previous contract's balances of these accounts handed back to them (one operator transaction); its hash, or null when it held nothing. */
  private async releasePrevious(network: ChainNetwork, operator: ethers.Wallet, previous: string, addresses: string[], tokens: string[]): Promise<string | null> {
    if ((await network.provider.getCode(previous)) === '0x') return null;
    const old = new ethers.Contract(previous, previousContract, network.provider);
    const pairs: [string, string][] = [];
    for (const a of addresses) for (const t of tokens) if (((await old.balanceOf(t, a)) as bigint) > 0n) pairs.push([a, t]);
    if (!pairs.length) return null;
    try {
      const tx = await operator.sendTransaction({ to: previous, data: previousContract.encodeFunctionData('release', [pairs.map(([a]) => a), pairs.map(([, t]) => t)]) });
      const receipt = await tx.wait();
      return receipt!.hash;
    } catch (e) {
      throw new Error(`releasing what the previous contract ${previous} holds failed: ${revertReason(e)}`);
    }
  }
}
