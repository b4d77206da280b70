import { parseChainFamilies, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { refuseUnlessEvm } from '../../../src/modules/chains/evm-only';
import { KeelError } from '../../../src/platform/errors';

const evm = { chainId: 31337, name: 'Dev', rpcUrl: 'http://127.0.0.1:8545', confirmations: 2 };
const USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const solana = { family: 'solana', name: 'Solana Devnet', network: 'devnet', rpcUrl: 'http://127.0.0.1:8899', tokens: [{ symbol: 'USDC', name: 'USD Coin', decimals: 6, mint: USDC }] };

describe('KEEL_CHAINS with two families', () => {
  test('a Solana cluster parses beside an EVM chain: finalized commitment, SPL tokens, a slug from its network', () => {
    const { evm: e, solana: s } = parseChainFamilies(JSON.stringify([evm, solana]));
    expect(e.map((c) => c.slug)).toEqual(['evm-31337']);
    expect(s).toEqual([expect.objectContaining({ family: 'solana', slug: 'solana-devnet', network: 'devnet', commitment: 'finalized', symbol: 'SOL', tokens: [expect.objectContaining({ mint: USDC, standard: 'SPL' })] })]);
    expect(parseChainsConfig(JSON.stringify([evm, solana])).map((c) => c.chainId)).toEqual([31337]);
  });

  test('refuses what Keel cannot serve: another commitment, a bad mint, a network twice, an unknown network', () => {
    expect(() => parseChainFamilies(JSON.stringify([{ ...solana, commitment: 'confirmed' }]))).toThrow(/\[0.commitment\]/);
    expect(() => parseChainFamilies(JSON.stringify([{ ...solana, tokens: [{ ...solana.tokens[0], mint: '0xabc' }] }]))).toThrow(/\[0.tokens.0.mint\] a Solana address/);
    expect(() => parseChainFamilies(JSON.stringify([solana, { ...solana, slug: 'other' }]))).toThrow(/each Solana network/);
    expect(() => parseChainFamilies(JSON.stringify([{ ...solana, network: 'testnet' }]))).toThrow(/\[0.network\]/);
    expect(() => parseChainFamilies(JSON.stringify([evm, { ...evm, chainId: 'x' }]))).toThrow(/\[1.chainId\]/);
  });

  test('an EVM-only feature is refused on a non-EVM chain with INVALID_NETWORK naming it', () => {
    expect(() => refuseUnlessEvm({ isEvmCompatible: true, name: 'Dev' }, 'swaps')).not.toThrow();
    let error: unknown;
    try {
      refuseUnlessEvm({ isEvmCompatible: false, name: 'Solana Devnet' }, 'swaps', 'assets.0.assetId');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KeelError);
    expect(error).toMatchObject({ code: 'INVALID_NETWORK', status: 400, details: { feature: 'Swaps', fields: [{ field: 'assets.0.assetId', error: 'INVALID_FIELD' }] } });
  });
});
