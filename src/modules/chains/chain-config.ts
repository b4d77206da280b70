import { z } from 'zod';
import { isAddress } from '@solana/kit';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address (0x and 40 hex digits)');

const tokenSchema = z.object({
  symbol: z.string().min(1).max(20),
  name: z.string().min(1).max(100),
  decimals: z.number().int().min(0).max(36),
  address,
  standard: z.string().default('ERC20'),
  logoUrl: z.string().default(''),
});

const chainSchema = z.object({
  chainId: z.number().int().positive(),
  name: z.string().min(1).max(100),
  slug: z
    .string()
    .regex(/^[a-z0-9-]{1,60}$/)
    .optional(),
  /** The native coin. */
  symbol: z.string().min(1).max(20).default('ETH'),
  nativeName: z.string().optional(),
  nativeDecimals: z.number().int().min(0).max(36).default(18),
  rpcUrl: z.string().url(),
  confirmations: z.number().int().min(1).max(1_000),
  network: z.string().default('mainnet'),
  tokenStandard: z.string().default('ERC20'),
  logoUrl: z.string().default(''),
  explorerUrl: z.string().optional(),
  tokens: z.array(tokenSchema).default([]),
  /** A Uniswap V2 deployment on the chain (its Router02; the factory and WETH are read from it): swaps and settlement rules use it. */
  dex: z.object({ router: address }).optional(),
  /** A local dev chain: its first dev-mnemonic account funds the sandbox faucet. Sandbox only. */
  dev: z.boolean().default(false),
});

export type ChainSpec = z.infer<typeof chainSchema> & { slug: string };
export type TokenSpec = z.infer<typeof tokenSchema>;

/** A Solana address (base58 of 32 bytes): a mint, an account. */
const solanaAddress = z.string().refine((v): boolean => isAddress(v), 'a Solana address (base58, 32 bytes)');

const splTokenSchema = z.object({
  symbol: z.string().min(1).max(20),
  name: z.string().min(1).max(100),
  decimals: z.number().int().min(0).max(18),
  /** The token's mint. Accounts of the SPL Token and Token-2022 programs are both read. */
  mint: solanaAddress,
  standard: z.literal('SPL').default('SPL'),
  logoUrl: z.string().default(''),
});

/**
 * A Solana cluster (issue 35). One per network name: `network` is its identity in the registry
 * (Solana has no chain id; `chainId` is null in the API). Deposits are credited at `finalized`
 * (the only commitment Keel credits at; `commitment` says so and accepts nothing else).
 */
const solanaChainSchema = z.object({
  family: z.literal('solana'),
  name: z.string().min(1).max(100),
  slug: z
    .string()
    .regex(/^[a-z0-9-]{1,60}$/)
    .optional(),
  network: z.enum(['devnet', 'mainnet']),
  rpcUrl: z.string().url(),
  commitment: z.literal('finalized').default('finalized'),
  symbol: z.string().min(1).max(20).default('SOL'),
  nativeName: z.string().default('Solana'),
  logoUrl: z.string().default(''),
  explorerUrl: z.string().optional(),
  tokens: z.array(splTokenSchema).default([]),
  /** Keel's own sandbox Solana network (LiteSVM): its faucet funds the sandbox faucet. Sandbox only. */
  dev: z.boolean().default(false),
});

export type SolanaChainSpec = z.infer<typeof solanaChainSchema> & { slug: string };
export type SplTokenSpec = z.infer<typeof splTokenSchema>;

/** SOL's decimals (lamports). */
export const SOL_DECIMALS = 9;

/** The chains of KEEL_CHAINS by family. */
export interface ChainFamilies {
  evm: ChainSpec[];
  solana: SolanaChainSpec[];
}

/**
 * KEEL_CHAINS: a JSON array of chains. An EVM chain (no `family`, or `"family": "evm"`) names its
 * chain id, RPC URL, confirmation count and ERC-20 tokens; a Solana cluster (`"family": "solana"`)
 * its network (devnet or mainnet), RPC URL and SPL tokens by mint.
 */
export function parseChainFamilies(text: string): ChainFamilies {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('KEEL_CHAINS: not valid JSON');
  }
  const entries = z.array(z.unknown()).min(1).safeParse(json);
  if (!entries.success) throw new Error(`KEEL_CHAINS: ${entries.error.issues.map((i) => i.message).join('; ')}`);
  const evm: ChainSpec[] = [];
  const solana: SolanaChainSpec[] = [];
  const problems: string[] = [];
  entries.data.forEach((raw, index) => {
    const family = (raw as { family?: unknown } | null)?.family;
    const parsed = family === 'solana' ? solanaChainSchema.safeParse(raw) : chainSchema.extend({ family: z.literal('evm').optional() }).safeParse(raw);
    if (!parsed.success) problems.push(...parsed.error.issues.map((i) => `  [${[index, ...i.path].join('.')}] ${i.message}`));
    else if ('network' in parsed.data && parsed.data.family === 'solana') solana.push({ ...parsed.data, slug: parsed.data.slug ?? `solana-${parsed.data.network}` });
    else {
      const { family: _family, ...spec } = parsed.data as z.infer<typeof chainSchema> & { family?: 'evm' };
      evm.push({ ...spec, slug: spec.slug ?? `evm-${spec.chainId}` });
    }
  });
  if (problems.length) throw new Error(`KEEL_CHAINS:\n${problems.join('\n')}`);
  const ids = evm.map((c) => c.chainId);
  if (new Set(ids).size !== ids.length) throw new Error('KEEL_CHAINS: each chainId may appear once');
  const networks = solana.map((c) => c.network);
  if (new Set(networks).size !== networks.length) throw new Error('KEEL_CHAINS: each Solana network (devnet, mainnet) may appear once');
  const slugs = [...evm, ...solana].map((c) => c.slug);
  if (new Set(slugs).size !== slugs.length) throw new Error('KEEL_CHAINS: each slug may appear once');
  return { evm, solana };
}

/** The EVM chains of KEEL_CHAINS (Solana clusters are parseChainFamilies'). */
export function parseChainsConfig(text: string): ChainSpec[] {
  return parseChainFamilies(text).evm;
}

/** The inverse: what a parent process hands its children (the test harness, `keel start` workers). */
export function formatChainsConfig(chains: (ChainSpec | SolanaChainSpec)[]): string {
  return JSON.stringify(chains);
}
