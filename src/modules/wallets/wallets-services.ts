import type { Platform } from '../../platform/platform';
import { GuardedHttp } from '../../platform/net/guarded-http';
import { OutboundGuard } from '../../platform/net/outbound-guard';
import type { ChainNetworks, ChainService } from '../chains';
import { AddressService } from './address.service';
import { MasterWalletService } from './master-wallet.service';
import { SendingWallets } from './sending-wallets';
import type { SettlementContractCheck } from './settlement-contract-check';
import type { WalletDependents } from './wallet-dependents';
import { WalletKeys } from './wallet-keys';
import type { WalletScreening } from './wallet-screening';
import { WatchedWallets } from './watched-wallets';

/** A caller's recovery RPC node gets this long per request and may answer this much. */
const RECOVERY_RPC_TIMEOUT_MS = 5_000;
const RECOVERY_RPC_MAX_RESPONSE_BYTES = 1_048_576;

/** The wallets module's services (WalletsServices), built from what they use; `screening`, `dependents` and `settlementContracts` are ports filled by modules above this one. */
export function createWalletsServices(
  platform: Pick<Platform, 'db' | 'config' | 'outbox' | 'unitOfWork' | 'secretBox'>,
  deps: { chains: ChainService; networks: ChainNetworks; screening: WalletScreening; dependents: WalletDependents; settlementContracts: SettlementContractCheck },
) {
  const { db, config, outbox, unitOfWork } = platform;
  const { chains, networks } = deps;
  const walletKeys = new WalletKeys(platform.secretBox);
  const masterWallets = new MasterWalletService(db, outbox, walletKeys, chains, networks, unitOfWork, deps.screening, deps.dependents, deps.settlementContracts);
  const recoveryRpc = new GuardedHttp(new OutboundGuard(config.RECOVERY_RPC_ALLOW_PRIVATE_URLS), { timeoutMs: RECOVERY_RPC_TIMEOUT_MS, maxResponseBytes: RECOVERY_RPC_MAX_RESPONSE_BYTES, keepAliveMs: 1_000 });
  const addresses = new AddressService(db, outbox, masterWallets, walletKeys, chains, networks, recoveryRpc, unitOfWork);
  const sendingWallets = new SendingWallets(db, walletKeys, masterWallets, addresses);
  return { watchedWallets: new WatchedWallets(db), sendingWallets, walletKeys, masterWallets, addresses };
}
