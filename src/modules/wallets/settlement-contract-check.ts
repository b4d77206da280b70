/**
 * What wallets ask of Keel's settlement contracts, a port this module owns (withdrawals'
 * SettlementContractGuard over the settlement module's deployments, wired in services.ts, since
 * both stand above this one): an auto-sweep's destination is never one, as no send to a caller's
 * destination pays one. The contract credits a trading balance only through its deposit function,
 * so a sweep to it would be nobody's.
 */
export interface SettlementContractCheck {
  /** 422 VALIDATION_ERROR naming `field` when `address` is Keel's settlement contract on the chain (any casing). */
  check(blockchainId: string, address: string, field: string): Promise<void>;
}
