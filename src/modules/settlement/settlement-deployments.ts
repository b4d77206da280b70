import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { lockUntilCommit } from '../../platform/db/advisory-lock';
import { devChainAccount } from '../../platform/chain/dev-accounts';
import { retryNonceClash, senderKey, serialized } from '../../platform/chain/dev-sender';
import type { ChainNetwork } from '../chains';
import { contractVersion, deploySettlementContract, SETTLEMENT_CONTRACT_VERSION } from './settlement-contract';

/** The settlement contract of one chain and the key that operates it. */
export interface SettlementDeployment {
  network: ChainNetwork;
  address: string;
  operator: ethers.Wallet;
  feeRecipient: string;
  /** When this contract became the chain's (a dev chain reset deploys a new one). */
  since: Date;
}

export interface DeployOptions {
  operator?: string;
  feeRecipient?: string;
  exitDelaySeconds?: number;
}

export interface DeployedContract {
  blockchainId: string;
  address: string;
  operator: string;
  feeRecipient: string;
  txHash: string;
}

/** The advisory lock `keel settlement deploy` holds from its check to its record (lockUntilCommit). */
const deployLock = (blockchainId: string) => `settlement-deploy:${blockchainId}`;

/** Dev chains: operator dev account #7, fee recipient dev account #8 (publicly known keys). */
const DEV_OPERATOR = 7;
const DEV_FEE_RECIPIENT = 8;

/**
 * Where each chain's settlement contract is (table settlement_contracts) and who operates it. On a
 * dev chain the contract is deployed when missing (at start, like the test tokens); on a configured
 * chain an operator deploys it with `keel settlement deploy`.
 */
export class SettlementDeployments {
  constructor(
    private readonly db: Knex,
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  operatorKey(network: ChainNetwork): string | null {
    if (this.config.SETTLEMENT_OPERATOR_KEY) return this.config.SETTLEMENT_OPERATOR_KEY;
    return network.spec.dev ? devChainAccount(DEV_OPERATOR).privateKey : null;
  }

  feeRecipient(network: ChainNetwork): string | null {
    if (this.config.SETTLEMENT_FEE_RECIPIENT) return ethers.getAddress(this.config.SETTLEMENT_FEE_RECIPIENT);
    return network.spec.dev ? devChainAccount(DEV_FEE_RECIPIENT).address : null;
  }

  async address(blockchainId: string, db: Knex = this.db): Promise<string | null> {
    const row = await db('settlement_contracts').where({ blockchainId }).first();
    return row?.address ?? null;
  }

  /**
   * Whether `address` is a settlement contract Keel deployed on the chain: its current one, or the
   * one it replaced (which holds what `keel settlement migrate` has not handed back yet). The
   * signing module's SettlementContracts: a wallet's key calls neither through the signing API.
   */
  async isSettlementContract(blockchainId: string, address: string): Promise<boolean> {
    const row = await this.db('settlement_contracts')
      .where({ blockchainId })
      .andWhere((q) => q.whereRaw('lower(address) = ?', [address.toLowerCase()]).orWhereRaw('lower(previous_address) = ?', [address.toLowerCase()]))
      .first('blockchainId');
    return row !== undefined;
  }

  /** The block the chain's settlement contract was deployed in (0 when its deployment is not known). */
  async deployedBlock(network: ChainNetwork): Promise<number> {
    const row = await this.db('settlement_contracts').where({ blockchainId: network.blockchainId }).first('deployedTxHash');
    return row?.deployedTxHash ? ((await network.provider.getTransactionReceipt(row.deployedTxHash))?.blockNumber ?? 0) : 0;
  }

  /**
   * The chain's deployment when a contract is recorded, an operator key is configured and the
   * contract is the version this Keel settles through (an earlier one reads batches differently:
   * nothing is sent to it, and the error says how to move on).
   */
  async get(network: ChainNetwork): Promise<SettlementDeployment | null> {
    const key = this.operatorKey(network);
    const row = await this.db('settlement_contracts').where({ blockchainId: network.blockchainId }).first();
    if (!key || !row) return null;
    if (!(await this.speaksCurrentVersion(row.address, network))) {
      this.logger.error({ chainId: network.spec.chainId, address: row.address }, `settlement: the chain's contract is not version ${SETTLEMENT_CONTRACT_VERSION}; nothing is settled until it is replaced (docs/settlement-on-chain.md, upgrading the contract)`);
      return null;
    }
    return { network, address: row.address, operator: this.operator(key, network), feeRecipient: row.feeRecipient, since: row.updatedAt };
  }

  /** Each chain's operator signer (its key is fixed for the chain: configured, or the dev chain's account). */
  private readonly operators = new Map<string, ethers.Wallet>();

  /** The operator's signer on a chain, made once: deriving its address from the key is an elliptic-curve multiplication, and this runs on every settlement step. */
  private operator(key: string, network: ChainNetwork): ethers.Wallet {
    let wallet = this.operators.get(network.blockchainId);
    if (wallet?.provider !== network.provider) this.operators.set(network.blockchainId, (wallet = new ethers.Wallet(key, network.provider)));
    return wallet;
  }

  private readonly current = new Set<string>();

  /** Whether the contract at `address` is the version this Keel settles through (remembered once it is: code never changes). */
  private async speaksCurrentVersion(address: string, network: ChainNetwork): Promise<boolean> {
    const key = `${network.blockchainId}|${address.toLowerCase()}`;
    if (this.current.has(key)) return true;
    if ((await contractVersion(network.provider, address)) !== SETTLEMENT_CONTRACT_VERSION) return false;
    this.current.add(key);
    return true;
  }

  /** On a dev chain: deploys the contract unless the recorded one still has code (a reset chain lost it) and is the current version. */
  async ensureOnDevChain(network: ChainNetwork): Promise<void> {
    if (!network.spec.dev) return;
    const recorded = await this.address(network.blockchainId);
    if (recorded && (await network.provider.getCode(recorded)) !== '0x' && (await this.speaksCurrentVersion(recorded, network))) return;
    const deployed = await this.deployAndRecord(network, devChainAccount(0).privateKey, {});
    this.logger.info({ chainId: network.spec.chainId, address: deployed.address }, 'settlement contract deployed on the dev chain');
  }

  /**
   * `keel settlement deploy`: deploys the contract from `deployerKey` and records it as the chain's
   * settlement contract. A chain that has one already is refused unless `replace` says to replace it,
   * and refused even then while the contract it replaced before is not migrated yet (`keel settlement
   * migrate` has not handed back what it holds): replacing again would forget that contract.
   *
   * The check and the record are one transaction under the chain's deploy lock, held while the
   * contract is deployed: of two deploys at once, the second waits, then reads what the first
   * recorded and is refused (nothing deployed), so neither can forget the contract the other replaced.
   */
  async deploy(network: ChainNetwork, deployerKey: string, opts: DeployOptions & { replace?: boolean }): Promise<DeployedContract> {
    return this.db.transaction(async (trx) => {
      await lockUntilCommit(trx, [deployLock(network.blockchainId)]);
      const row = await trx('settlement_contracts').where({ blockchainId: network.blockchainId }).first();
      if (row?.previousAddress && !row.previousReleasedAt) {
        throw new Error(
          `settlement deploy: the chain's previous contract ${row.previousAddress} (replaced by ${row.address}) is not migrated yet: run \`keel settlement migrate --chain ${network.spec.slug}\` first, which hands back what it holds; deploying again would forget it`,
        );
      }
      if (row && !opts.replace) throw new Error(`settlement deploy: the chain already has settlement contract ${row.address}; pass --replace to deploy a new one in its place (then run \`keel settlement migrate\`)`);
      return this.deployAndRecord(network, deployerKey, opts, trx);
    });
  }

  /** Deploys the contract and records it (in `db`, the caller's transaction if any), the one it replaces as the previous contract (not yet migrated). */
  private async deployAndRecord(network: ChainNetwork, deployerKey: string, opts: DeployOptions, db: Knex | Knex.Transaction = this.db): Promise<DeployedContract> {
    const operatorKey = this.operatorKey(network);
    const operator = opts.operator ? ethers.getAddress(opts.operator) : operatorKey ? new ethers.Wallet(operatorKey).address : null;
    const feeRecipient = opts.feeRecipient ? ethers.getAddress(opts.feeRecipient) : this.feeRecipient(network);
    if (!operator) throw new Error('settlement deploy: no operator (set SETTLEMENT_OPERATOR_KEY or pass --operator)');
    if (!feeRecipient) throw new Error('settlement deploy: no fee recipient (set SETTLEMENT_FEE_RECIPIENT or pass --fee-recipient)');
    const wallet = new ethers.Wallet(deployerKey, network.provider);
    const params = { operator, feeRecipient, exitDelaySeconds: opts.exitDelaySeconds ?? this.config.SETTLEMENT_EXIT_DELAY_SECONDS };
    // The dev chains' deployer is also their faucet: one send at a time here, and a nonce another process took is retried.
    const { address, txHash } = await serialized(senderKey(network.spec.rpcUrl, wallet.address), () => retryNonceClash(() => deploySettlementContract(new ethers.NonceManager(wallet), params)));
    // The contract it replaces is kept: `keel settlement migrate` hands back what it still holds. Its time is
    // when it is recorded (the deployment's `since`), not when the deploy's transaction began.
    await db('settlement_contracts')
      .insert({ blockchainId: network.blockchainId, address, operatorAddress: operator, feeRecipient, deployedTxHash: txHash })
      .onConflict('blockchain_id')
      .merge({ previousAddress: db.raw('settlement_contracts.address'), previousReleasedAt: null, address, operatorAddress: operator, feeRecipient, deployedTxHash: txHash, exitsScannedBlock: null, updatedAt: db.raw('clock_timestamp()') });
    return { blockchainId: network.blockchainId, address, operator, feeRecipient, txHash };
  }
}
