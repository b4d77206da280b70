import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import type { SendingWallets } from '../wallets/sending-wallets';
import { FundingPending, FundingRefused, FundingSigner, FundingTransactions } from './funding-transactions';
import { Fence, LeaseLost, UNFENCED } from './chain-lease';
import type { SettlementDeployment } from './settlement-deployments';
import { isDefinitiveRefusal, NATIVE_TOKEN, settlementInterface } from './settlement-contract';
import type { WalletAccount } from './wallet-accounts';
import type { RefusedFunding } from './funding-retry';

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
 * key, what the contract still lacks for a batch (an ERC-20 is approved once first), through
 * FundingTransactions (recorded before broadcast; their gas charged to the wallet's native balance
 * in the ledger, as for transfers out). A wallet with a funding transaction still open (a crash, a
 * failed broadcast, one not mined within the wait) is not funded again until the step has followed
 * it to its end: it is returned as pending, for its trades to wait without counting an attempt.
 * A wallet that lacks its share on chain is left short: the batch's simulation then names it and
 * the batch is split around it. A wallet whose funding the chain refuses (no coin for gas; a funding
 * transaction that reverts) is returned, for its trades to be tried again later.
 */
export class SettlementFunding {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly txs: FundingTransactions,
    private readonly logger: Logger,
  ) {}

  /** Funds what the needs lack; the wallets whose funding the chain refused. */
  async fund(d: SettlementDeployment, needs: FundingNeed[], batchId: string | null = null, lease: Fence = UNFENCED): Promise<RefusedFunding[]> {
    const open = await this.txs.walletsWithOpen(d.network.blockchainId);
    const refused: RefusedFunding[] = [];
    const contract = new ethers.Contract(d.address, settlementInterface(), d.network.provider);
    for (const need of needs) {
      // What a wallet's open funding transaction deposits is not known yet: its trades wait for it (the step follows it).
      if (open.has(need.account.walletId)) {
        refused.push({ walletId: need.account.walletId, token: need.token, reason: 'a funding transaction of the wallet is not mined yet', pending: true });
        continue;
      }
      try {
        const held: bigint = await contract.balanceOf(need.token, need.account.address);
        if (held >= need.amount) continue;
        await this.deposit(d, need, need.amount - held, batchId, lease);
      } catch (e) {
        if (e instanceof FundingPending) {
          open.add(need.account.walletId);
          refused.push({ walletId: need.account.walletId, token: need.token, reason: e.message.slice(0, 200), pending: true });
          continue;
        }
        // A wallet the chain refuses (no coin for gas, a token that reverts) is left short and named to
        // the caller; anything else (the node unreachable) ends this step, to be tried again.
        if (e instanceof LeaseLost || (!(e instanceof FundingRefused) && !isDefinitiveRefusal(e))) throw e;
        const reason = e instanceof Error ? e.message.slice(0, 200) : String(e);
        refused.push({ walletId: need.account.walletId, token: need.token, reason });
        this.logger.warn({ walletId: need.account.walletId, token: need.token, err: reason }, 'settlement: the chain refuses to fund the contract from the wallet');
      }
    }
    return refused;
  }

  private async deposit(d: SettlementDeployment, need: FundingNeed, lacking: bigint, batchId: string | null, lease: Fence): Promise<void> {
    const provider = d.network.provider;
    const address = need.account.address;
    const settlement = settlementInterface();
    if (need.token === NATIVE_TOKEN) {
      const fees = await provider.getFeeData();
      const spare = (await provider.getBalance(address)) - NATIVE_GAS_RESERVE * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
      const amount = spare < lacking ? spare : lacking;
      if (amount <= 0n) return;
      await this.send(d, need, batchId, lease, { to: d.address, value: amount, data: settlement.encodeFunctionData('depositNative') });
      return;
    }
    const token = new ethers.Contract(need.token, erc20, provider);
    const onChain: bigint = await token.balanceOf(address);
    const amount = onChain < lacking ? onChain : lacking;
    if (amount <= 0n) return;
    if ((await token.allowance(address, d.address)) < amount) {
      await this.send(d, need, batchId, lease, { to: need.token, value: 0n, data: erc20.encodeFunctionData('approve', [d.address, ethers.MaxUint256]) });
    }
    await this.send(d, need, batchId, lease, { to: d.address, value: 0n, data: settlement.encodeFunctionData('deposit', [need.token, amount]) });
  }

  /** Signs from the wallet (nonce from sender_nonces, shared with transfers), records, sends, waits for the receipt, charges its gas. */
  private async send(d: SettlementDeployment, need: FundingNeed, batchId: string | null, lease: Fence, request: { to: string; value: bigint; data: string }): Promise<void> {
    await this.txs.send(d, need.account, this.signer(d), request, batchId, lease);
  }

  /** Every open funding transaction of the chain advanced once, without waiting (one stuck below the market fee signed again with a higher fee). */
  followOpen(d: SettlementDeployment, lease: Fence): Promise<void> {
    return this.txs.followOpen(d, lease, this.signer(d));
  }

  private signer(d: SettlementDeployment): FundingSigner {
    return (a) => this.wallets.signer(a.organizationId, a.masterWalletId, a.addressId, d.network.provider);
  }

  /** Funding transactions of a reorged batch: each charged for the block it is in now, open again, or dropped (see FundingTransactions.followReorged). */
  async recheckReorged(d: SettlementDeployment, batchId: string, lease: Fence): Promise<void> {
    await this.txs.followReorged(d, batchId, lease);
  }
}
