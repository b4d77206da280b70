import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import type { CustodyLedgerSync } from '../ledger/custody-ledger-sync';
import type { SendingWallets } from '../wallets/sending-wallets';
import { takeSenderNonce } from '../withdrawals/sender-nonces';
import type { SettlementDeployment } from './settlement-deployments';
import { isDefinitiveRefusal, NATIVE_TOKEN, settlementInterface } from './settlement-contract';
import type { WalletAccount } from './wallet-accounts';

const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)', 'function allowance(address,address) view returns (uint256)', 'function approve(address,uint256) returns (bool)']);
/** Native coin kept back for the deposit's own gas. */
const NATIVE_GAS_RESERVE = 120_000n;

/** What a wallet must hold in the contract for a batch: base units of a token (NATIVE_TOKEN for the coin). */
export interface FundingNeed {
  account: WalletAccount;
  assetId: string;
  token: string;
  amount: bigint;
}

/**
 * Moves into the settlement contract, from each paying wallet's own address and signed with its
 * key, what the contract still lacks for a batch (an ERC-20 is approved once first). The gas these
 * transactions pay is charged to the wallet's native balance in the ledger, as for transfers out.
 * A wallet that cannot cover its share is left short: the batch's simulation then names it and the
 * batch is split around it. A funding transaction that reverts counts as refused too.
 */
export class SettlementFunding {
  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly gas: CustodyLedgerSync,
    private readonly logger: Logger,
  ) {}

  async fund(d: SettlementDeployment, needs: FundingNeed[], batchId: string | null = null): Promise<void> {
    const contract = new ethers.Contract(d.address, settlementInterface(), d.network.provider);
    for (const need of needs) {
      try {
        const held: bigint = await contract.balanceOf(need.token, need.account.address);
        if (held >= need.amount) continue;
        await this.deposit(d, need, need.amount - held, batchId);
      } catch (e) {
        // A wallet the chain refuses (no coin for gas, a token that reverts) is left short, and the
        // batch isolates its trade; anything else (the node unreachable) ends this step, to be tried again.
        if (!isDefinitiveRefusal(e)) throw e;
        this.logger.warn({ walletId: need.account.walletId, token: need.token, err: e instanceof Error ? e.message.slice(0, 200) : String(e) }, 'settlement: the chain refuses to fund the contract from the wallet');
      }
    }
  }

  private async deposit(d: SettlementDeployment, need: FundingNeed, lacking: bigint, batchId: string | null): Promise<void> {
    const provider = d.network.provider;
    const address = need.account.address;
    const settlement = settlementInterface();
    if (need.token === NATIVE_TOKEN) {
      const fees = await provider.getFeeData();
      const spare = (await provider.getBalance(address)) - NATIVE_GAS_RESERVE * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
      const amount = spare < lacking ? spare : lacking;
      if (amount <= 0n) return;
      await this.send(d, need, batchId, { to: d.address, value: amount, data: settlement.encodeFunctionData('depositNative') });
      return;
    }
    const token = new ethers.Contract(need.token, erc20, provider);
    const onChain: bigint = await token.balanceOf(address);
    const amount = onChain < lacking ? onChain : lacking;
    if (amount <= 0n) return;
    if ((await token.allowance(address, d.address)) < amount) {
      await this.send(d, need, batchId, { to: need.token, value: 0n, data: erc20.encodeFunctionData('approve', [d.address, ethers.MaxUint256]) });
    }
    await this.send(d, need, batchId, { to: d.address, value: 0n, data: settlement.encodeFunctionData('deposit', [need.token, amount]) });
  }

  /** Signs from the wallet (nonce from sender_nonces, shared with transfers), waits for the receipt, charges its gas. */
  private async send(d: SettlementDeployment, need: FundingNeed, batchId: string | null, request: { to: string; value: bigint; data: string }): Promise<void> {
    const { network } = d;
    const a = need.account;
    const signer = await this.wallets.signer(a.organizationId, a.masterWalletId, a.addressId, network.provider);
    const [gas, fees] = await Promise.all([network.provider.estimateGas({ from: a.address, ...request }), network.provider.getFeeData()]);
    const raw = await this.db.transaction(async (trx) => {
      await resyncAfterReorg(trx, network.blockchainId, a.address, network.provider);
      const nonce = await takeSenderNonce(trx, network.blockchainId, a.address, network.provider);
      return signer.signTransaction({ type: 2, chainId: network.spec.chainId, nonce, gasLimit: (gas * 12n) / 10n, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas!, ...request });
    });
    const sent = await network.provider.broadcastTransaction(raw);
    const receipt = await sent.wait(1, 60_000);
    if (!receipt) throw new Error(`settlement funding ${sent.hash}: no receipt`);
    await this.db.transaction(async (trx) => {
      await this.gas.chargeGasTo(trx, { organizationId: a.organizationId, walletId: a.walletId, blockchainId: network.blockchainId, fee: receipt.gasUsed * receipt.gasPrice, reference: gasReference(receipt.hash, receipt.blockHash) });
      if (batchId) {
        await trx('settlement_funding_txs')
          .insert({ txHash: receipt.hash, batchId, blockchainId: network.blockchainId, organizationId: a.organizationId, walletId: a.walletId, blockHash: receipt.blockHash })
          .onConflict('tx_hash')
          .merge({ blockHash: receipt.blockHash, gasRefunded: false });
      }
    });
    if (receipt.status !== 1) throw new Error(`settlement funding ${sent.hash} reverted`);
  }

  /** Funding transactions of a batch that a reorg dropped from the chain: their gas is given back to the wallets. */
  async refundDropped(d: SettlementDeployment, batchId: string): Promise<void> {
    const txs: { txHash: string; blockHash: string }[] = await this.db('settlement_funding_txs').where({ batchId, gasRefunded: false });
    for (const t of txs) {
      const receipt = await d.network.provider.getTransactionReceipt(t.txHash);
      if (receipt && receipt.blockHash === t.blockHash) continue;
      await this.db.transaction(async (trx) => {
        const claimed = await trx('settlement_funding_txs').where({ txHash: t.txHash, gasRefunded: false }).update({ gasRefunded: true });
        if (claimed) await this.gas.refundGas(trx, gasReference(t.txHash, t.blockHash));
      });
    }
  }
}

/** Per transaction and block: the same signed transaction mined again after a reorg pays its gas again. */
const gasReference = (txHash: string, blockHash: string) => `settlement-gas:${txHash}:${blockHash}`;

/**
 * After a reorg (or a dev chain rewound) the address's count on chain can fall below Keel's next
 * nonce with nothing of Keel's pending: the next nonce then follows the chain again, or every later
 * transaction would wait behind a gap for ever.
 */
async function resyncAfterReorg(trx: Knex.Transaction, blockchainId: string, address: string, provider: ethers.Provider): Promise<void> {
  const row = await trx('sender_nonces').where({ blockchainId, address }).forUpdate().first();
  if (!row) return;
  const pending = await provider.getTransactionCount(address, 'pending');
  if (pending >= Number(row.nextNonce)) return;
  const open = await trx('transfer_items as i').join('transfers as t', 't.id', 'i.transferId').where({ 't.blockchainId': blockchainId, 't.fromAddress': address }).whereIn('i.status', ['SIGNED', 'SUBMITTED']).first();
  if (!open) await trx('sender_nonces').where({ blockchainId, address }).update({ nextNonce: pending });
}
