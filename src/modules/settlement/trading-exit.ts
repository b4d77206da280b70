import { Knex } from 'knex';
import { ethers } from 'ethers';
import { assetsOfChain, type AssetModel, type ChainNetwork } from '../chains';
import type { LedgerService, CustodyLedgerSync } from '../ledger';
import type { SendingWallets } from '../wallets';
import type { SettlementDeployments } from './settlement-deployments';
import type { TradingService } from './trading.service';
import type { TradingExits } from './trading-exits';
import { contractLogs, NATIVE_TOKEN, revertReason, settlementInterface } from './settlement-contract';

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
 * ledger still equals the chain; an exit mined before a crash is moved by the next run (from the
 * contract's `Released` events). The request is recorded (TradingExits) as it is mined, and by
 * every later run: the wallet's resting orders on the chain's markets are cancelled and it places
 * no more. Refused while the trading account holds less than the contract pays out (trades of the
 * wallet not settled yet: let them settle or fail first).
 */
export class TradingExit {
  constructor(
    private readonly db: Knex,
    private readonly deployments: SettlementDeployments,
    private readonly trading: TradingService,
    private readonly wallets: SendingWallets,
    private readonly ledger: LedgerService,
    private readonly custody: CustodyLedgerSync,
    private readonly exits: TradingExits,
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
      await this.exits.record(network, { account: wallet.address, requestedAt: at, availableAt: at + delay, txHash: receipt.hash });
      return { step: 'requested', txHash: receipt.hash, availableAt: new Date(Number(at + delay) * 1000).toISOString() };
    }
    // Asked before (by an earlier run, or from the wallet's address some other way): known to the order book before anything leaves.
    await this.exits.record(network, { account: wallet.address, requestedAt, availableAt: requestedAt + delay, txHash: null });
    const availableAt = new Date(Number(requestedAt + delay) * 1000).toISOString();
    const assets = await assetsOfChain(this.db, network.blockchainId);
    const owner = { organizationId: wallet.organizationId, walletId: ledgerWallet };
    // An exit mined before a crash, its ledger move never made, is finished first: its amount no longer shows in the contract.
    const payouts = await this.finishExits(network, owner, assets, await this.released(network, contract, wallet.address));
    const held = [];
    for (const a of assets) {
      const token = a.isNative ? NATIVE_TOKEN : ethers.getAddress(a.address);
      const amount: bigint = await contract.balanceOf(token, wallet.address);
      if (amount === 0n) continue;
      const available = await this.ledger.spendable(this.db, ledgerWallet, a.id, 'trading');
      if (available < amount) throw new Error(`the wallet's trading account has ${available} ${a.symbol} (base units) free, the contract pays out ${amount}: let its trades settle or fail first`);
      held.push({ asset: a, token, amount });
    }
    for (const h of held) {
      try {
        await contract.exit.estimateGas(h.token);
      } catch (e) {
        if (/ExitNotReady/.test(revertReason(e))) return { step: 'waiting', availableAt };
        throw e;
      }
      const receipt = await this.mined(() => contract.exit(h.token));
      const logs = receipt.logs.filter((l) => l.address.toLowerCase() === address.toLowerCase()).map((l) => contract.interface.parseLog(l)).filter((l) => l?.name === 'Released');
      payouts.push(...(await this.finishExits(network, owner, assets, logs.map((l) => ({ token: l!.args.token as string, amount: l!.args.amount as bigint, txHash: receipt.hash })))));
    }
    return { step: 'exited', payouts };
  }

  /** The wallet's payouts from the contract (its `Released` events), read from the contract's deployment on. */
  private async released(network: ChainNetwork, contract: ethers.Contract, account: string): Promise<{ token: string; amount: bigint; txHash: string }[]> {
    const logs = await contractLogs(contract, contract.filters.Released(account), await this.deployments.deployedBlock(network), await network.provider.getBlockNumber());
    return logs.map((l) => ({ token: l.args.token as string, amount: l.args.amount as bigint, txHash: l.transactionHash }));
  }

  /**
   * Moves each payout in the ledger from trading to custody and charges its transaction's gas to
   * custody, once each (the references name the transaction): whichever run sees it first makes the
   * move, so an exit mined before a crash is finished by the next run. The payouts this call moved.
   */
  private async finishExits(network: ChainNetwork, wallet: { organizationId: string; walletId: string }, assets: AssetModel[], released: { token: string; amount: bigint; txHash: string }[]): Promise<ExitPayout[]> {
    const byToken = new Map(assets.map((a) => [a.isNative ? NATIVE_TOKEN : ethers.getAddress(a.address), a]));
    const moved: ExitPayout[] = [];
    for (const r of released) {
      const asset = byToken.get(ethers.getAddress(r.token));
      if (!asset) continue;
      const receipt = (await network.provider.getTransactionReceipt(r.txHash))!;
      const applied = await this.db.transaction(async (trx) => {
        const move = { organizationId: wallet.organizationId, walletId: wallet.walletId, assetId: asset.id, amount: r.amount, reference: `trading-exit:${r.txHash}:${asset.id}` };
        if (!(await this.ledger.debit(trx, { ...move, account: 'trading' })).applied) return false;
        await this.ledger.credit(trx, { ...move, account: 'custody' });
        await this.custody.chargeTransactionGas(trx, { organizationId: wallet.organizationId, walletId: wallet.walletId, blockchainId: network.blockchainId, txHash: r.txHash, fee: receipt.fee });
        return true;
      });
      if (applied) moved.push({ symbol: asset.symbol, rawAmount: r.amount.toString(), txHash: r.txHash });
    }
    return moved;
  }

  /** Sends one of the wallet's own transactions and waits for it (it pays its own gas). */
  private async mined(tx: () => Promise<ethers.ContractTransactionResponse>): Promise<ethers.TransactionReceipt> {
    try {
      return (await (await tx()).wait())!;
    } catch (e) {
      throw new Error(`the wallet's transaction failed: ${revertReason(e)} (it pays its own gas: give it coin first)`);
    }
  }

  /** Sends one of the wallet's own transactions, waits for it, and charges its gas to the wallet's custody account. */
  private async send(network: ChainNetwork, organizationId: string, walletId: string, tx: () => Promise<ethers.ContractTransactionResponse>): Promise<ethers.TransactionReceipt> {
    const receipt = await this.mined(tx);
    await this.db.transaction((trx) => this.custody.chargeTransactionGas(trx, { organizationId, walletId, blockchainId: network.blockchainId, txHash: receipt.hash, fee: receipt.fee }));
    return receipt;
  }
}
