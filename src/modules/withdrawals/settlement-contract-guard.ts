import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';

/**
 * The port the withdrawals module owns and the settlement module fills (it knows the contracts Keel
 * deployed): whether an address is a settlement contract of Keel's on a chain. What a wallet holds
 * there is moved by Keel's own paths, which keep the trading ledger equal to the contract (deposits
 * to and withdrawals from trading, `keel settlement exit`). So a wallet's key never calls one, nor
 * signs for one, through the signing API: a direct `exit(token)` would take money out of the
 * contract while the ledger still shows it (and its counterparties' trades against it fail); a
 * direct deposit, `requestExit` or any other call would bypass the ledger as surely. Nor does any
 * send to a caller's destination pay one (SettlementContractGuard).
 */
export interface SettlementContracts {
  /** Whether `address` is the chain's settlement contract or the one it replaced (still holding what `keel settlement migrate` has not handed back). */
  isSettlementContract(blockchainId: string, address: string): Promise<boolean>;
}

/**
 * The one check of every send to a destination a caller chose (a withdrawal, an agent payment, a
 * swap's recipient, a settlement rule's or an auto-sweep's destination, a payout from trading): the
 * settlement contract credits a trading balance only through its deposit function, so a plain
 * token transfer or native send to it is nobody's balance, stranded there while the ledger books an outflow.
 */
export class SettlementContractGuard {
  constructor(private readonly contracts: SettlementContracts) {}

  /** Whether nothing may be sent to `address` on the chain: it is Keel's settlement contract there (any casing). */
  refuses(blockchainId: string, address: string): Promise<boolean> {
    return this.contracts.isSettlementContract(blockchainId, address);
  }

  /** 422 VALIDATION_ERROR naming `field` when `address` is Keel's settlement contract on the chain (any casing). */
  async check(blockchainId: string, address: string, field: string): Promise<void> {
    if (!(await this.refuses(blockchainId, address))) return;
    const contract = ethers.getAddress(address);
    throw new KeelError(
      'VALIDATION_ERROR',
      `${field} is Keel's settlement contract (${contract}), which credits a trading balance only through a deposit to trading: money sent to it otherwise belongs to no one and is lost. ` +
        "To fund a wallet's trading balance, deposit to trading instead (POST /v1/orderbook/wallets/{walletId}/trading/deposits; depositToTrading)",
      { fields: [{ field, error: 'INVALID_FIELD' }], settlementContract: contract },
    );
  }
}
