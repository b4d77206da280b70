import { KeelError } from '../../platform/errors';
import { parseUnits } from '../../platform/decimal';
import { Ids } from '../../platform/ids';
import type { ChainNetworks, ChainNetwork, ChainService } from '../chains';
import type { SendingWallet } from '../wallets';
import { checksummedAddress } from './evm-address';
import type { PricedLine, TransferLine } from './transfer.domain';

/** Resolves a request's lines to assets and base-unit amounts; every line must be on one chain the wallet is enabled on. */
export async function priceLines(chains: ChainService, networks: ChainNetworks, wallet: SendingWallet, input: TransferLine[]): Promise<{ network: ChainNetwork; lines: PricedLine[] }> {
  const assets = await chains.assetViews(input.filter((l) => Ids.isUuid(l.assetId)).map((l) => l.assetId.toLowerCase()));
  const lines = input.map((l, i): PricedLine => {
    const asset = assets.get(l.assetId.toLowerCase());
    if (!asset || !asset.isActive) throw KeelError.invalidField(`assets.${i}.assetId`, 'unknown asset');
    return { asset, recipient: checksummedAddress(l.recipient, `assets.${i}.recipient`), rawAmount: rawAmount(l.amount, asset.decimals, i) };
  });
  const blockchainId = lines[0].asset.blockchainId;
  if (lines.some((l) => l.asset.blockchainId !== blockchainId)) throw new KeelError('INVALID_NETWORK', 'Every line of a transfer must be on the same chain');
  const network = networks.get(blockchainId);
  if (!network || !wallet.blockchainIds.includes(blockchainId)) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on the chain of these assets');
  return { network, lines };
}

function rawAmount(text: string, decimals: number, i: number): bigint {
  const raw = parseUnits(text, decimals);
  if (raw === null) throw KeelError.invalidField(`assets.${i}.amount`, `must be a positive decimal string with at most ${decimals} decimals`);
  if (raw <= 0n) throw KeelError.invalidField(`assets.${i}.amount`, 'must be above 0');
  return raw;
}
