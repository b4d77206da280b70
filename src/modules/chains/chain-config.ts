import { z } from 'zod';

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

/** KEEL_CHAINS: a JSON array of chains, each with its RPC URL, confirmation count and tokens. */
export function parseChainsConfig(text: string): ChainSpec[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('KEEL_CHAINS: not valid JSON');
  }
  const parsed = z.array(chainSchema).min(1).safeParse(json);
  if (!parsed.success) {
    throw new Error(`KEEL_CHAINS:\n${parsed.error.issues.map((i) => `  [${i.path.join('.')}] ${i.message}`).join('\n')}`);
  }
  const chains = parsed.data.map((c) => ({ ...c, slug: c.slug ?? `evm-${c.chainId}` }));
  const ids = chains.map((c) => c.chainId);
  if (new Set(ids).size !== ids.length) throw new Error('KEEL_CHAINS: each chainId may appear once');
  return chains;
}

/** The inverse: what a parent process hands its children (the test harness, `keel start` workers). */
export function formatChainsConfig(chains: ChainSpec[]): string {
  return JSON.stringify(chains);
}
