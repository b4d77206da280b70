/**
 * The port the signing module owns and the settlement module fills (it knows the contracts Keel
 * deployed): whether an address is a settlement contract of Keel's on a chain. A wallet's key never
 * calls one, nor signs for one, through the signing API: what a wallet holds there is moved by
 * Keel's own paths, which keep the trading ledger equal to the contract (deposits to and
 * withdrawals from trading, `keel settlement exit`). A direct `exit(token)` would take money out
 * of the contract while the ledger still shows it (and its counterparties' trades against it fail);
 * a direct deposit, `requestExit` or any other call would bypass the ledger as surely.
 */
export interface SettlementContracts {
  /** Whether `address` is the chain's settlement contract or the one it replaced (still holding what `keel settlement migrate` has not handed back). */
  isSettlementContract(blockchainId: string, address: string): Promise<boolean>;
}

