/**
 * A wallet that asked to leave a chain's settlement contract by its exit hatch (`requestExit()`):
 * once `availableAt` has passed its balance may leave the contract at any moment, without Keel, so a
 * trade matched against it could not settle. From the request on it places no order on the chain's
 * markets (placement-checks.ts words the refusal) and its resting orders there are cancelled.
 */
export interface WalletExit {
  requestedAt: Date;
  availableAt: Date;
}

/**
 * The port the orders module owns and the settlement module fills (it knows the contract): which of
 * these wallets (as the ledger keys them) asked to exit the settlement contract of the chain.
 */
export interface WalletExits {
  exitsOf(blockchainId: string, walletIds: string[]): Promise<Map<string, WalletExit>>;
}

/** Until settlement is wired (or where it is not): no wallet has asked to exit. */
export const NO_EXITS: WalletExits = { exitsOf: async () => new Map() };
