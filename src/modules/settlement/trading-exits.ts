import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import { assetsOfChain, type ChainNetwork } from '../chains';
import type { OrderService, WalletExit, WalletExits } from '../orders';
import { walletAtAddress } from '../wallets';
import type { SettlementDeployments } from './settlement-deployments';
import { contractLogs, settlementInterface } from './settlement-contract';

/** An account's request to exit the contract, as the contract states it (unix seconds). */
export interface ExitRequest {
  account: string;
  requestedAt: bigint;
  availableAt: bigint;
  /** The transaction that asked, when known. */
  txHash: string | null;
}

const at = (seconds: bigint) => new Date(Number(seconds) * 1000);

/**
 * What Keel knows of its wallets' exits from a chain's settlement contract (table trading_exits):
 * an exit asked through `keel settlement exit` (TradingExit) is recorded as it is mined, one asked
 * any other way (a transaction from the wallet's address Keel did not make itself: a signed
 * transaction, say) when the settlement worker reads the contract's `ExitRequested` events. From
 * then on the wallet places no order on the chain's markets (the orders module asks `exitsOf`, its
 * WalletExits port) and its resting orders there are cancelled, as Keel's own cancels with the
 * usual events: once the exit delay has passed its balance may leave the contract at any moment,
 * and a trade against it could not settle. Trades already matched still settle: the contract
 * settles against an account whose exit is pending, and `keel settlement exit` takes nothing out
 * while they are unsettled. The contract cannot take a request back (and after an exit the account
 * may leave again at once), so neither does Keel: only a new contract of the chain starts afresh.
 */
export class TradingExits implements WalletExits {
  constructor(
    private readonly db: Knex,
    private readonly deployments: SettlementDeployments,
    private readonly orders: Pick<OrderService, 'cancelOfWallets'>,
    private readonly logger: Logger,
    private readonly options: { reorgWindowBlocks: number },
  ) {}

  /** Which of these wallets asked to exit the chain's current settlement contract. */
  async exitsOf(blockchainId: string, walletIds: string[]): Promise<Map<string, WalletExit>> {
    if (!walletIds.length) return new Map();
    const { rows } = await this.db.raw<{ rows: { walletId: string; requestedAt: Date; availableAt: Date }[] }>(
      `SELECT e.wallet_id AS "walletId", e.requested_at AS "requestedAt", e.available_at AS "availableAt"
         FROM trading_exits e JOIN settlement_contracts c ON c.blockchain_id = e.blockchain_id AND c.address = e.contract_address
        WHERE e.blockchain_id = :blockchainId AND e.wallet_id = ANY(CAST(:walletIds AS uuid[]))`,
      { blockchainId, walletIds },
    );
    return new Map(rows.map((r) => [r.walletId, { requestedAt: r.requestedAt, availableAt: r.availableAt }]));
  }

  /**
   * Records an exit asked of the chain's current contract, when the account is one of Keel's
   * wallets (a later request of the same account moves the dates), then cancels the wallet's
   * resting orders on the chain's markets.
   */
  async record(network: ChainNetwork, request: ExitRequest): Promise<void> {
    const contract = await this.deployments.address(network.blockchainId);
    if (!contract) return;
    const account = ethers.getAddress(request.account);
    const wallet = await walletAtAddress(this.db, network.blockchainId, account);
    if (!wallet) return;
    await this.db.raw(
      `INSERT INTO trading_exits (blockchain_id, contract_address, account, organization_id, wallet_id, requested_at, available_at, tx_hash)
       VALUES (:blockchainId, :contract, :account, :organizationId, :walletId, :requestedAt, :availableAt, :txHash)
       ON CONFLICT (blockchain_id, contract_address, account) DO UPDATE
          SET requested_at = excluded.requested_at, available_at = excluded.available_at,
              tx_hash = CASE WHEN excluded.requested_at > trading_exits.requested_at THEN excluded.tx_hash ELSE coalesce(trading_exits.tx_hash, excluded.tx_hash) END
        WHERE excluded.requested_at > trading_exits.requested_at OR (excluded.requested_at = trading_exits.requested_at AND trading_exits.tx_hash IS NULL)`,
      { blockchainId: network.blockchainId, contract, account, ...wallet, requestedAt: at(request.requestedAt), availableAt: at(request.availableAt), txHash: request.txHash },
    );
    this.logger.info({ blockchainId: network.blockchainId, walletId: wallet.walletId, availableAt: at(request.availableAt).toISOString() }, 'settlement: a wallet asked to exit the contract; it places no more orders on the chain');
    await this.cancelOrders(network.blockchainId, [wallet.walletId]);
  }

  /**
   * The settlement worker's, at each step: the contract's `ExitRequested` events since it last
   * looked (the last reorg window read again, so a request a reorg moved is not missed), those of
   * Keel's wallets recorded; then every order still resting of a wallet that asked to exit is
   * cancelled (one whose placement was admitted as the exit was being recorded).
   */
  async watch(network: ChainNetwork): Promise<void> {
    const { blockchainId } = network;
    const row = await this.db('settlement_contracts').where({ blockchainId }).first('address', 'exitsScannedBlock');
    if (!row) return;
    const head = await network.provider.getBlockNumber();
    const scanned = row.exitsScannedBlock === null ? null : Number(row.exitsScannedBlock);
    if (scanned !== head) {
      const from = scanned === null ? await this.deployments.deployedBlock(network) : Math.max(0, scanned + 1 - this.options.reorgWindowBlocks);
      const contract = new ethers.Contract(row.address, settlementInterface(), network.provider);
      const logs = await contractLogs(contract, contract.filters.ExitRequested(), from, head);
      const delay: bigint = logs.length ? await contract.exitDelay() : 0n;
      for (const l of logs) {
        const availableAt = l.args.availableAt as bigint;
        await this.record(network, { account: l.args.account as string, requestedAt: availableAt - delay, availableAt, txHash: l.transactionHash });
      }
      await this.db('settlement_contracts').where({ blockchainId, address: row.address }).update({ exitsScannedBlock: head });
    }
    const exiting: { walletId: string }[] = await this.db('trading_exits').where({ blockchainId, contractAddress: row.address }).select('walletId');
    await this.cancelOrders(blockchainId, exiting.map((e) => e.walletId));
  }

  private async cancelOrders(blockchainId: string, walletIds: string[]): Promise<void> {
    if (!walletIds.length) return;
    const cancelled = await this.orders.cancelOfWallets(walletIds, (await assetsOfChain(this.db, blockchainId)).map((a) => a.id));
    if (cancelled.length) this.logger.info({ blockchainId, orderIds: cancelled }, 'settlement: orders of wallets that asked to exit the contract cancelled');
  }
}
