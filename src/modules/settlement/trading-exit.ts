import { Knex } from 'knex';
import { ethers } from 'ethers';
import { assetsOfChain, type ChainNetwork } from '../chains';
import type { LedgerService, CustodyLedgerSync } from '../ledger';
import type { SendingWallets } from '../wallets';
import type { SettlementDeployments } from './settlement-deployments';
import type { TradingService } from './trading.service';
import { NATIVE_TOKEN, revertReason, settlementInterface } from './settlement-contract';

export interface ExitPayout {
  symbol: string;
  rawAmount: string;
  txHash: string;
}

export type ExitOutcome =
  | { step: 'requested'; txHash: string; availableAt: string }
  | { step: 'waiting'; availableAt: string }
  | { step: 'exited'; payouts: ExitPayout[] };

/**
 * `keel settlement exit`: the contract's exit hatch run for a custody customer. Keel holds the
 * wallet's key, so if settlement stops for good the operator leaves the contract on the wallet's
 * behalf, from the wallet's own address (its coin pays the gas): the first run asks to exit
 * (`requestExit`), a run after the contract's exit delay takes every token's balance out
 * (`exit(token)`) to the wallet's address. Each payout moves the same amount in the ledger from
 * the wallet's trading account to its custody account (the gas is charged to custody), so the
 * ledger still equals the chain. Refused while the trading account holds less than the contract
 * pays out (open orders, or trades of the wallet not settled yet: cancel them, or let them settle
 * or fail, first).
 */
export class TradingExit {
  constructor(
    private readonly db: Knex,
    private readonly deployments: SettlementDeployments,
    private readonly trading: TradingService,
    private readonly wallets: SendingWallets,
    private readonly ledger: LedgerService,
    private readonly custody: CustodyLedgerSync,
  ) {}

  async run(network: ChainNetwork, organizationId: string, walletId: string): Promise<ExitOutcome> {
    const address = await this.deployments.address(network.blockchainId);
    if (!address) throw new Error('the chain has no settlement contract');
    const wallet = await this.trading.wallet(organizationId, walletId);
    const ledgerWallet = wallet.addressId ?? wallet.masterWalletId;
    const signer = await this.wallets.signer(organizationId, wallet.masterWalletId, wallet.addressId, network.provider);
    const contract = new ethers.Contract(address, settlementInterface(), signer);
    const requestedAt: bigint = await contract.exitRequestedAt(wallet.address);
    const delay: bigint = await contract.exitDelay();
    if (requestedAt === 0n) {
      const receipt = await this.send(network, wallet.organizationId, ledgerWallet, () => contract.requestExit());
      const at: bigint = await contract.exitRequestedAt(wallet.address);
      return { step: 'requested', txHash: receipt.hash, availableAt: new Date(Number(at + delay) * 1000).toISOString() };
    }
    const availableAt = new Date(Number(requestedAt + delay) * 1000).toISOString();
    const assets = await assetsOfChain(this.db, network.blockchainId);
    const held = [];
    for (const a of assets) {
      const token = a.isNative ? NATIVE_TOKEN : ethers.getAddress(a.address);
      const amount: bigint = await contract.balanceOf(token, wallet.address);
      if (amount === 0n) continue;
      const available = await this.ledger.spendable(this.db, ledgerWallet, a.id, 'trading');
      if (available < amount) throw new Error(`the wallet's trading account has ${available} ${a.symbol} (base units) free, the contract pays out ${amount}: cancel its open orders, or let its trades settle or fail, first`);
      held.push({ asset: a, token, amount });
    }
    const payouts: ExitPayout[] = [];
    for (const h of held) {
      try {
        await contract.exit.estimateGas(h.token);
      } catch (e) {
        if (/ExitNotReady/.test(revertReason(e))) return { step: 'waiting', availableAt };
        throw e;
      }
      const receipt = await this.send(network, wallet.organizationId, ledgerWallet, () => contract.exit(h.token));
      await this.db.transaction(async (trx) => {
        const move = { organizationId: wallet.organizationId, walletId: ledgerWallet, assetId: h.asset.id, amount: h.amount, reference: `trading-exit:${receipt.hash}:${h.asset.id}` };
        await this.ledger.debit(trx, { ...move, account: 'trading' });
        await this.ledger.credit(trx, { ...move, account: 'custody' });
      });
      payouts.push({ symbol: h.asset.symbol, rawAmount: h.amount.toString(), txHash: receipt.hash });
    }
    return { step: 'exited', payouts };
  }

  /** Sends one of the wallet's own transactions, waits for it, and charges its gas to the wallet's custody account. */
  private async send(network: ChainNetwork, organizationId: string, walletId: string, tx: () => Promise<ethers.ContractTransactionResponse>): Promise<ethers.TransactionReceipt> {
    let receipt: ethers.TransactionReceipt | null;
    try {
      receipt = await (await tx()).wait();
    } catch (e) {
      throw new Error(`the wallet's transaction failed: ${revertReason(e)} (it pays its own gas: give it coin first)`);
    }
    await this.db.transaction((trx) =>
      this.custody.chargeGasTo(trx, { organizationId, walletId, blockchainId: network.blockchainId, fee: receipt!.gasUsed * receipt!.gasPrice, reference: `gas:trading-exit:${receipt!.hash}` }),
    );
    return receipt!;
  }
}
