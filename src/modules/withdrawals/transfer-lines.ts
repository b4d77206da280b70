import { KeelError } from '../../platform/errors';
import { exactInDecimals, parseUnits } from '../../platform/decimal';
import { Ids } from '../../platform/ids';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallet } from '../wallets';
import { isNftStandard, NftStandard } from '../chains';
import { invalidRecipient, recipientOn, transferChain, TransferChain } from './transfer-families';
import type { PricedLine, TransferLine } from './transfer.domain';

/** Resolves a request's lines to assets and base-unit amounts; every line must be on one chain the wallet is enabled on. */
export async function priceLines(chains: ChainService, networks: ChainNetworks, wallet: SendingWallet, input: TransferLine[]): Promise<{ chain: TransferChain; lines: PricedLine[] }> {
  const assets = await chains.assetViews(input.filter((l) => Ids.isUuid(l.assetId)).map((l) => l.assetId.toLowerCase()));
  const lines = input.map((l, i): PricedLine => {
    const asset = assets.get(l.assetId.toLowerCase());
    if (!asset || !asset.isActive) throw KeelError.invalidField(`assets.${i}.assetId`, 'unknown asset');
    const recipient = recipientOn(asset.blockchain, l.recipient, `assets.${i}.recipient`);
    if (!isNftStandard(asset.standard)) {
      if (l.tokenId !== undefined && l.tokenId !== null) throw KeelError.invalidField(`assets.${i}.tokenId`, 'only an NFT collection (ERC721, ERC1155) takes a token id');
      return { asset, recipient, rawAmount: rawAmount(l.amount, asset, i) };
    }
    return { asset, recipient, ...nftAmount(asset.standard, asset.symbol, l, i) };
  });
  const blockchainId = lines[0].asset.blockchainId;
  if (lines.some((l) => l.asset.blockchainId !== blockchainId)) throw new KeelError('INVALID_NETWORK', 'Every line of a transfer must be on the same chain');
  const chain = transferChain(networks, blockchainId);
  if (!chain || !wallet.blockchainIds.includes(blockchainId)) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on the chain of these assets');
  // On Solana a transfer to the sender itself lands and moves nothing, and no deposit is seen to give the amount back to the ledger.
  const toItself = chain.family === 'solana' ? lines.findIndex((l) => l.recipient === wallet.address) : -1;
  if (toItself >= 0) {
    const field = `assets.${toItself}.recipient`;
    throw invalidRecipient(field, `${field} is the sending address itself: on Solana such a transfer moves nothing`);
  }
  return { chain, lines };
}

/** An NFT line: its token id (a decimal integer below 2^256) and how many (ERC-721: exactly 1). */
function nftAmount(standard: NftStandard, symbol: string, l: TransferLine, i: number): { tokenId: bigint; rawAmount: bigint } {
  if (l.tokenId === undefined || l.tokenId === null || !/^[0-9]{1,78}$/.test(l.tokenId) || BigInt(l.tokenId) >= 2n ** 256n) {
    throw KeelError.invalidField(`assets.${i}.tokenId`, 'an NFT line needs the token id, a decimal integer below 2^256');
  }
  const amount = rawAmount(l.amount, { decimals: 0, symbol }, i);
  if (standard === 'ERC721' && amount !== 1n) throw KeelError.invalidField(`assets.${i}.amount`, 'an ERC-721 token is sent whole: amount must be "1"');
  return { tokenId: BigInt(l.tokenId), rawAmount: amount };
}

/**
 * A line's amount in base units: above 0 and below 2^256 (a token's uint256), so the chain could
 * carry it. Digits past the asset's decimals are accepted while they are zeros ("10.0000000" of a
 * 6-decimal token is exactly 10); one that is not cannot be sent exactly and is refused.
 */
function rawAmount(text: string, asset: { decimals: number; symbol: string }, i: number): bigint {
  const raw = parseUnits(text, asset.decimals);
  if (raw === null) throw KeelError.invalidField(`assets.${i}.amount`, exactInDecimals(asset.decimals, { of: asset.symbol }));
  if (raw <= 0n) throw KeelError.invalidField(`assets.${i}.amount`, 'must be above 0');
  if (raw >= 2n ** 256n) throw KeelError.invalidField(`assets.${i}.amount`, 'is too large');
  return raw;
}
