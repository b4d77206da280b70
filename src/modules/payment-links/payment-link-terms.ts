import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { askedUnits } from '../checkout';
import type { AssetModel, ChainService } from '../chains';
import type { MasterWalletService, MasterWalletModel } from '../wallets';

/** Stablecoins that pay a USD amount at par. */
const USD_STABLECOINS = ['USDC', 'USDT', 'DAI'];

export interface LinkTermsInput {
  currency: string;
  amount: string | null;
  evmSettlementWalletId: string;
  /** A master wallet on a Solana cluster: the link is paid on that cluster too. */
  solanaSettlementWalletId?: string | null;
  allowedBlockchainIds?: string[] | null;
  allowedAssetIds?: string[] | null;
}

export interface LinkTerms {
  wallet: MasterWalletModel;
  solanaWallet: MasterWalletModel | null;
  allowedBlockchainIds: string[];
  allowedAssetIds: string[];
}

/** Whether an asset pays an amount in `currency` at par: its own symbol, or a USD stablecoin for USD. */
export function paysCurrency(symbol: string, currency: string): boolean {
  const s = symbol.toUpperCase();
  return s === currency || (currency === 'USD' && USD_STABLECOINS.includes(s));
}

/**
 * What a link may be paid with, checked against its settlement wallet: the chains (default: every
 * chain the wallet is enabled on) and the assets on them (default: those that pay the currency at
 * par). The amount must be exact in every allowed asset's units.
 */
export async function resolveLinkTerms(db: Knex | Knex.Transaction, wallets: MasterWalletService, chains: ChainService, organizationId: string, input: LinkTermsInput): Promise<LinkTerms> {
  const wallet = await settlementWallet(db, wallets, chains, organizationId, input.evmSettlementWalletId, 'evmSettlementWalletId', true);
  const solanaWallet = input.solanaSettlementWalletId ? await settlementWallet(db, wallets, chains, organizationId, input.solanaSettlementWalletId, 'solanaSettlementWalletId', false) : null;
  // A Solana wallet is enabled on its own cluster alone.
  const enabled = [...(await wallets.enabledChainIds(wallet.id, db)), ...(solanaWallet ? await wallets.enabledChainIds(solanaWallet.id, db) : [])];
  const allowed = input.allowedBlockchainIds?.length ? [...new Set(input.allowedBlockchainIds.map((id) => id.toLowerCase()))] : enabled;
  const foreign = allowed.filter((id) => !enabled.includes(id));
  if (foreign.length) throw KeelError.invalidField('allowedBlockchainIds', `the settlement wallet is not enabled on ${foreign.join(', ')}`);
  const onChains = await chains.activeAssetsOn(allowed, db);
  let assets: AssetModel[];
  if (input.allowedAssetIds?.length) {
    const wanted = [...new Set(input.allowedAssetIds.map((id) => id.toLowerCase()))];
    const unknown = wanted.filter((id) => !onChains.some((a) => a.id === id));
    if (unknown.length) throw KeelError.invalidField('allowedAssetIds', `not an active asset of the allowed blockchains: ${unknown.join(', ')}`);
    assets = onChains.filter((a) => wanted.includes(a.id));
  } else {
    assets = onChains.filter((a) => paysCurrency(a.symbol, input.currency));
    if (!assets.length) throw KeelError.invalidField('allowedAssetIds', `no asset on the allowed blockchains pays ${input.currency}; name the assets`);
  }
  if (input.amount !== null) for (const a of await chains.withChains(assets, db)) askedUnits(input.amount, a);
  return { wallet, solanaWallet, allowedBlockchainIds: [...new Set(assets.map((a) => a.blockchainId))].filter((id) => allowed.includes(id)), allowedAssetIds: assets.map((a) => a.id) };
}

/**
 * A settlement wallet of the organisation (another's, or none: 404), active, on a chain of the
 * family its field names (else 400 INVALID_NETWORK on that field). The one place payment links
 * branch on the chain family: the spec names a settlement wallet per family (evm/solanaSettlementWalletId).
 */
async function settlementWallet(db: Knex | Knex.Transaction, wallets: MasterWalletService, chains: ChainService, organizationId: string, id: string, field: string, evm: boolean): Promise<MasterWalletModel> {
  const wallet = await wallets.row(organizationId, id, db);
  if (!wallet.isActive) throw KeelError.invalidField(field, 'the master wallet is deactivated');
  const chain = await chains.findBlockchain(wallet.blockchainId, db);
  if (chain && chain.isEvmCompatible !== evm) {
    throw new KeelError('INVALID_NETWORK', `${field}: the master wallet is on ${chain.name}, not ${evm ? 'an EVM chain' : 'a Solana cluster'}`, { fields: [{ field, error: 'INVALID_FIELD' }] });
  }
  return wallet;
}
