/**
 * The wallets module's face: what other modules may use of it. Master wallets, their deposit addresses, keys and the wallets Keel sends from.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { AddressService } from './address.service';
import type { MasterWalletService } from './master-wallet.service';
import type { SendingWallets } from './sending-wallets';
import type { WalletKeys } from './wallet-keys';
import type { WatchedWallets } from './watched-wallets';

export { AddressService } from './address.service';
export { MasterWalletService, parseMasterWalletId } from './master-wallet.service';
export type { MasterWalletView } from './master-wallet.service';
export { SendingWallets, walletSourceOf } from './sending-wallets';
export type { SendingWallet, WalletSource } from './sending-wallets';
export { checksumOrNull, readConfigurations, sweepDestinationAllowed } from './wallet-configurations';
export type { WalletConfigurations } from './wallet-configurations';
export type { SendingConfigurations, WalletAmlView, WalletScreening } from './wallet-screening';
export type { AddressModel, MasterWalletModel } from './wallet.model';
export { activeWalletOnChain, deactivateAddresses, masterWalletLabel, walletAtAddress } from './wallet-rows';
export { walletAccounts } from './wallet-accounts';
export type { OpenCheckout, WalletDependents } from './wallet-dependents';
export { WatchedWallets } from './watched-wallets';
export type { BlockWindow, WalletsInUse, WatchedWallet } from './watched-wallets';

export { createWalletsServices } from './wallets-services';

/** The wallets module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface WalletsServices {
  walletKeys: WalletKeys;
  masterWallets: MasterWalletService;
  addresses: AddressService;
  watchedWallets: WatchedWallets;
  sendingWallets: SendingWallets;
}
