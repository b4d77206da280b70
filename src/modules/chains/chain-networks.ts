import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';
import { DevChain, startDevChain } from '../../platform/chain/devchain';
import { devChainAccount } from '../../platform/chain/dev-accounts';
import { deployTestTokens } from '../../platform/chain/test-tokens';
import { deployTestNfts } from '../../platform/chain/test-nfts';
import { deployDex } from '../../platform/chain/dex';
import type { Worker } from '../../platform/worker';
import { EvmOnlyFeature, refuseUnlessEvm } from './evm-only';
import type { ChainFamily, ChainPort } from '../../platform/chain-port/chain-port';
import { SolanaChain } from '../../platform/chain-port/solana-chain';
import { EvmChain } from '../../platform/chain-port/evm-chain';
import { EvmJsonRpcProvider } from '../../platform/chain-port/evm-receipts';
import { timedFetchRequest } from '../../platform/net/timed-fetch-request';
import { SolanaDevnet, startSolanaDevnet } from '../../platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../platform/solana-devnet/genesis';
import { ChainSpec, SOL_DECIMALS, SolanaChainSpec, parseChainFamilies } from './chain-config';
import { AssetModel, BlockchainModel, NATIVE_ASSET_ADDRESS, SOLANA_NATIVE_ASSET_ADDRESS } from './chain.model';

/**
 * One EVM chain Keel talks to: its registry id, its configuration, its chain port and the port's
 * JSON-RPC provider (for what stays EVM-only: swaps, settlement, signing requests).
 */
export interface ChainNetwork {
  blockchainId: string;
  spec: ChainSpec;
  port: EvmChain;
  provider: ethers.JsonRpcProvider;
}

/** One Solana cluster Keel talks to: its registry id, its configuration and its chain port. */
export interface SolanaNetwork {
  blockchainId: string;
  spec: SolanaChainSpec;
  port: SolanaChain;
}

/** ethers' own default is 300 s: a node that hangs would hold a sender or watcher step that long. */
export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

/**
 * A provider whose every request gives up after timeoutMs (timedFetchRequest: TIMEOUT, which the
 * chain port counts as the node not answering: sending is tried again, never failed for it).
 */
export function jsonRpcProvider(rpcUrl: string | ethers.FetchRequest, chainId: number, timeoutMs = DEFAULT_RPC_TIMEOUT_MS): ethers.JsonRpcProvider {
  const request = typeof rpcUrl === 'string' ? timedFetchRequest(rpcUrl, timeoutMs) : rpcUrl;
  request.timeout = timeoutMs;
  // staticNetwork: no eth_chainId probe per request; cacheTimeout -1: reads always see the latest state.
  // Its receipts' `fee` counts an OP-stack rollup's L1 data fee (evm-receipts.ts).
  return new EvmJsonRpcProvider(request, chainId, { staticNetwork: ethers.Network.from(chainId), cacheTimeout: -1, pollingInterval: 250 });
}

/**
 * The chains of this deployment: KEEL_CHAINS, or in sandbox when it is unset, Keel's own Hardhat
 * dev chains (DEV_CHAIN_IDS) with the test tokens deployed. Either way the registry tables are
 * brought in line on open, so blockchains and assets are readable at once.
 */
export class ChainNetworks implements Worker {
  private readonly byBlockchainId = new Map<string, ChainNetwork>();
  private readonly solanaByBlockchainId = new Map<string, SolanaNetwork>();
  private readonly devChains: DevChain[] = [];
  private readonly solanaDevnets: SolanaDevnet[] = [];

  /** Without a source the set starts empty and start() has nothing to do (fromRegistry fills it). */
  constructor(private readonly source?: { config: Config; db: Knex; logger: Logger }) {}

  static async open(config: Config, db: Knex, logger: Logger): Promise<ChainNetworks> {
    const networks = new ChainNetworks({ config, db, logger });
    await networks.start();
    return networks;
  }

  async start(): Promise<void> {
    if (!this.source) return;
    const { config, db, logger } = this.source;
    try {
      const families = config.KEEL_CHAINS
        ? parseChainFamilies(config.KEEL_CHAINS)
        : { evm: await startDevChains(config, this.devChains, logger), solana: config.DEV_SOLANA ? [await startDevSolana(config, this.solanaDevnets, logger)] : [] };
      const specs = families.evm;
      if (config.KEEL_ENV === 'production' && [...specs, ...families.solana].some((s) => s.dev)) throw new Error('KEEL_CHAINS: dev chains are not allowed in production');
      for (const spec of specs) {
        const blockchainId = await syncRegistry(db, spec);
        this.add(evmNetwork(blockchainId, spec, config.CHAIN_RPC_TIMEOUT_MS));
      }
      for (const spec of families.solana) this.addSolana({ blockchainId: await syncSolanaRegistry(db, spec), spec, port: new SolanaChain({ rpcUrl: spec.rpcUrl }) });
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  /**
   * The chains as the registry last recorded them, without starting or checking anything: for
   * operator commands that run beside a live deployment (`keel dev fund`, `keel org create`).
   */
  static async fromRegistry(db: Knex, rpcTimeoutMs?: number): Promise<ChainNetworks> {
    const rows = await BlockchainModel.query(db).where({ isActive: true });
    const tokens = await AssetModel.query(db).where({ isNative: false, isActive: true });
    const networks = new ChainNetworks();
    for (const r of rows) {
      if (r.family === 'solana') {
        const spec = solanaSpecOfRow(r, tokens.filter((t) => t.blockchainId === r.id));
        networks.addSolana({ blockchainId: r.id, spec, port: new SolanaChain({ rpcUrl: spec.rpcUrl }) });
        continue;
      }
      const spec: ChainSpec = {
        chainId: Number(r.chainId),
        name: r.name,
        slug: r.slug,
        symbol: r.symbol,
        nativeDecimals: 18,
        rpcUrl: r.rpcUrl,
        confirmations: r.confirmations,
        network: r.network,
        tokenStandard: r.tokenStandard,
        logoUrl: r.logoUrl,
        tokens: tokens.filter((t) => t.blockchainId === r.id).map((t) => ({ symbol: t.symbol, name: t.name, decimals: t.decimals, address: t.address, standard: t.standard, logoUrl: t.logoUrl })),
        dev: r.isDev,
      };
      const dexRouter = (r.configurations as { dexRouter?: string } | null)?.dexRouter;
      if (dexRouter) spec.dex = { router: dexRouter };
      networks.add(evmNetwork(r.id, spec, rpcTimeoutMs));
    }
    return networks;
  }

  private add(network: ChainNetwork): void {
    this.byBlockchainId.set(network.blockchainId, network);
  }

  private addSolana(network: SolanaNetwork): void {
    this.solanaByBlockchainId.set(network.blockchainId, network);
  }

  /** The EVM chains (Solana clusters are solanaNetworks(); both: ported()). */
  all(): ChainNetwork[] {
    return [...this.byBlockchainId.values()];
  }

  /** The EVM chain with this registry id (undefined for a Solana cluster: see port()). */
  get(blockchainId: string): ChainNetwork | undefined {
    return this.byBlockchainId.get(blockchainId);
  }

  /** The Solana clusters of this deployment. */
  solanaNetworks(): SolanaNetwork[] {
    return [...this.solanaByBlockchainId.values()];
  }

  solana(blockchainId: string): SolanaNetwork | undefined {
    return this.solanaByBlockchainId.get(blockchainId);
  }

  /** The family of a chain this deployment serves (undefined: not served). */
  family(blockchainId: string): ChainFamily | undefined {
    return this.port(blockchainId)?.family;
  }

  /** The one registry of chain ports, either family: blockchain id → ChainPort (undefined: not served here). */
  port(blockchainId: string): ChainPort | undefined {
    return (this.byBlockchainId.get(blockchainId) ?? this.solanaByBlockchainId.get(blockchainId))?.port;
  }

  /** Every chain of this deployment, either family, with its port. */
  ported(): { blockchainId: string; port: ChainPort }[] {
    return [...this.byBlockchainId.values(), ...this.solanaByBlockchainId.values()];
  }

  /**
   * Refuses an EVM-only feature (issue 35) on a Solana cluster this deployment serves: 400
   * INVALID_NETWORK naming it. Other chains pass, for the caller's own checks.
   */
  refuseOnSolana(blockchainId: string | undefined | null, feature: EvmOnlyFeature, field?: string): void {
    const solana = blockchainId ? this.solanaByBlockchainId.get(blockchainId.toLowerCase()) : undefined;
    if (solana) refuseUnlessEvm({ isEvmCompatible: false, name: solana.spec.name }, feature, field);
  }

  /** The chain an operator names on the command line: its blockchain id, chain id or slug. */
  find(reference: string): ChainNetwork | undefined {
    return this.all().find((n) => [n.blockchainId, String(n.spec.chainId), n.spec.slug].includes(reference));
  }

  /** The blockchain id of the chain of either family an operator names: its id, (EVM) chain id or slug. */
  findBlockchainId(reference: string): string | undefined {
    return this.find(reference)?.blockchainId ?? this.solanaNetworks().find((n) => [n.blockchainId, n.spec.slug].includes(reference))?.blockchainId;
  }

  /** The chains this process started itself (sandbox without KEEL_CHAINS). */
  get startedDevChains(): readonly DevChain[] {
    return this.devChains;
  }

  /** The sandbox Solana network this process started itself (sandbox without KEEL_CHAINS). */
  get startedSolanaDevnet(): SolanaDevnet | undefined {
    return this.solanaDevnets[0];
  }

  /** True for a dev chain this process started itself (its history cannot reorganise across a restart). */
  startedHere(network: ChainNetwork): boolean {
    return this.devChains.some((c) => c.chainId === network.spec.chainId);
  }

  /** Closes the providers and stops the dev chains this process started. */
  async stop(): Promise<void> {
    for (const n of this.byBlockchainId.values()) n.provider.destroy();
    await Promise.all([...this.devChains.map((c) => c.stop()), ...this.solanaDevnets.map((d) => d.stop())]);
  }
}

function evmNetwork(blockchainId: string, spec: ChainSpec, rpcTimeoutMs?: number): ChainNetwork {
  const provider = jsonRpcProvider(spec.rpcUrl, spec.chainId, rpcTimeoutMs);
  return { blockchainId, spec, provider, port: new EvmChain({ provider, chainId: spec.chainId, confirmations: spec.confirmations }) };
}

/** A Solana cluster's spec as the registry recorded it (for operator commands: fromRegistry). */
function solanaSpecOfRow(r: BlockchainModel, tokens: AssetModel[]): SolanaChainSpec {
  return {
    family: 'solana',
    name: r.name,
    slug: r.slug,
    network: r.network as SolanaChainSpec['network'],
    rpcUrl: r.rpcUrl,
    commitment: 'finalized',
    symbol: r.symbol,
    nativeName: r.symbol,
    logoUrl: r.logoUrl,
    tokens: tokens.map((t) => ({ symbol: t.symbol, name: t.name, decimals: t.decimals, mint: t.address, standard: 'SPL', logoUrl: t.logoUrl })),
    dev: r.isDev,
  };
}

/** Starts the sandbox Solana network (its journal in KEEL_DATA_DIR) with the test USDC and USDT mints; the spec that describes it. */
export async function startDevSolana(config: Config, started: SolanaDevnet[], logger: Logger): Promise<SolanaChainSpec> {
  const devnet = await startSolanaDevnet({
    port: config.DEV_SOLANA_PORT ?? (config.DEV_CHAIN_PORT === 0 ? 0 : 8899),
    slotMs: config.DEV_SOLANA_SLOT_MS,
    finalizedLag: config.DEV_SOLANA_FINALIZED_LAG,
    dataDir: config.KEEL_DATA_DIR,
  });
  started.push(devnet);
  if (devnet.history === 'discarded') logger.warn({ reason: devnet.discardReason }, 'solana devnet journal could not be replayed: set aside, the network starts from genesis');
  logger.info({ rpcUrl: devnet.rpcUrl, history: devnet.history }, devnet.history === 'restored' ? 'solana devnet restored from its journal' : 'solana devnet started');
  return devSolanaSpec(devnet.rpcUrl);
}

/** The sandbox Solana network as a Solana cluster of KEEL_CHAINS: network devnet, SOL and the test mints. */
export function devSolanaSpec(rpcUrl: string): SolanaChainSpec {
  return {
    family: 'solana',
    name: 'Keel Solana Devnet',
    slug: 'solana-devnet',
    network: 'devnet',
    rpcUrl,
    commitment: 'finalized',
    symbol: 'SOL',
    nativeName: 'Devnet SOL',
    logoUrl: '',
    tokens: DEVNET_MINTS.map((m) => ({ symbol: m.symbol, name: m.name, decimals: m.decimals, mint: m.address, standard: 'SPL' as const, logoUrl: '' })),
    dev: true,
  };
}

/** Starts DEV_CHAIN_IDS and deploys the test tokens on each; the ChainSpecs that describe them. */
export async function startDevChains(config: Config, started: DevChain[], logger: Logger): Promise<ChainSpec[]> {
  const specs: ChainSpec[] = [];
  for (const [i, chainId] of config.DEV_CHAIN_IDS.entries()) {
    const chain = await startDevChain({
      chainId,
      port: config.DEV_CHAIN_PORT === 0 ? 0 : config.DEV_CHAIN_PORT + i,
      blockIntervalMs: config.DEV_CHAIN_BLOCK_INTERVAL_MS,
      dataDir: config.KEEL_DATA_DIR,
    });
    started.push(chain);
    const tokens = await deployTestTokens(chain.rpcUrl, devChainAccount(0).privateKey);
    const dex = await deployDex(chain.rpcUrl, devChainAccount(0).privateKey, tokens);
    const nfts = await deployTestNfts(chain.rpcUrl);
    if (chain.history === 'discarded') logger.warn({ chainId, reason: chain.discardReason }, 'dev chain journal could not be replayed: set aside, the chain starts from a new genesis');
    logger.info({ chainId, rpcUrl: chain.rpcUrl, history: chain.history }, chain.history === 'restored' ? 'dev chain restored from its journal' : 'dev chain started');
    specs.push(devChainSpec(chainId, chain.rpcUrl, config.DEV_CHAIN_CONFIRMATIONS, [...tokens, ...nfts], dex));
  }
  return specs;
}

/** The dev chain as a ChainSpec: its test tokens (ERC-20 unless a token names its standard, as the test NFT collections do). */
export function devChainSpec(chainId: number, rpcUrl: string, confirmations: number, tokens: { symbol: string; name: string; decimals: number; address: string; standard?: string }[], dex?: { router: string }): ChainSpec {
  return {
    chainId,
    name: `Keel Dev Chain ${chainId}`,
    slug: `dev-${chainId}`,
    symbol: 'ETH',
    nativeName: 'Dev Ether',
    nativeDecimals: 18,
    rpcUrl,
    confirmations,
    network: 'devnet',
    tokenStandard: 'ERC20',
    logoUrl: '',
    tokens: tokens.map((t) => ({ ...t, standard: t.standard ?? 'ERC20', logoUrl: '' })),
    ...(dex ? { dex: { router: dex.router } } : {}),
    dev: true,
  };
}

/** Upserts the chain and its assets (native coin first); returns the chain's registry id. */
async function syncRegistry(db: Knex, spec: ChainSpec): Promise<string> {
  return db.transaction(async (trx) => {
    const configurations = { confirmations: spec.confirmations, ...(spec.explorerUrl ? { explorerUrl: spec.explorerUrl } : {}), ...(spec.dex ? { dexRouter: spec.dex.router } : {}) };
    const [chain] = await trx('blockchains')
      .insert({
        chain_id: spec.chainId,
        family: 'evm',
        name: spec.name,
        slug: spec.slug,
        symbol: spec.symbol,
        network: spec.network,
        token_standard: spec.tokenStandard,
        logo_url: spec.logoUrl,
        is_dev: spec.dev,
        rpc_url: spec.rpcUrl,
        confirmations: spec.confirmations,
        configurations,
      })
      .onConflict('chain_id')
      .merge(['name', 'slug', 'symbol', 'network', 'token_standard', 'logo_url', 'is_dev', 'rpc_url', 'confirmations', 'configurations', 'updated_at'])
      .returning('id');
    const blockchainId = (chain as { id: string }).id;
    const assets = [
      { name: spec.nativeName ?? spec.symbol, symbol: spec.symbol, decimals: spec.nativeDecimals, address: NATIVE_ASSET_ADDRESS, standard: 'native', logo_url: spec.logoUrl, is_native: true },
      ...spec.tokens.map((t) => ({ name: t.name, symbol: t.symbol, decimals: t.decimals, address: ethers.getAddress(t.address), standard: t.standard, logo_url: t.logoUrl, is_native: false })),
    ];
    await trx('assets')
      .insert(assets.map((a) => ({ ...a, blockchain_id: blockchainId, network: spec.network })))
      .onConflict(['blockchain_id', 'address'])
      .merge(['name', 'symbol', 'decimals', 'standard', 'logo_url', 'is_native', 'network', 'updated_at']);
    return blockchainId;
  });
}

/**
 * Upserts a Solana cluster (its key: the network, migration 046) and its assets: SOL (at the System
 * Program's address) and its SPL tokens by mint. `confirmations` is 1: a deposit is credited once its
 * slot is finalized (the commitment is the finality, not a count).
 */
async function syncSolanaRegistry(db: Knex, spec: SolanaChainSpec): Promise<string> {
  return db.transaction(async (trx) => {
    const configurations = { commitment: spec.commitment, ...(spec.explorerUrl ? { explorerUrl: spec.explorerUrl } : {}) };
    const row = {
      chain_id: null,
      family: 'solana',
      name: spec.name,
      slug: spec.slug,
      symbol: spec.symbol,
      network: spec.network,
      token_standard: 'SPL',
      logo_url: spec.logoUrl,
      is_evm_compatible: false,
      is_dev: spec.dev,
      rpc_url: spec.rpcUrl,
      confirmations: 1,
      configurations,
    };
    const [chain] = await trx('blockchains')
      .insert(row)
      .onConflict(trx.raw("(network) WHERE family = 'solana'"))
      .merge(['name', 'slug', 'symbol', 'token_standard', 'logo_url', 'is_dev', 'rpc_url', 'confirmations', 'configurations', 'updated_at'])
      .returning('id');
    const blockchainId = (chain as { id: string }).id;
    const assets = [
      { name: spec.nativeName, symbol: spec.symbol, decimals: SOL_DECIMALS, address: SOLANA_NATIVE_ASSET_ADDRESS, standard: 'native', logo_url: spec.logoUrl, is_native: true },
      ...spec.tokens.map((t) => ({ name: t.name, symbol: t.symbol, decimals: t.decimals, address: t.mint, standard: t.standard, logo_url: t.logoUrl, is_native: false })),
    ];
    await trx('assets')
      .insert(assets.map((a) => ({ ...a, blockchain_id: blockchainId, network: spec.network })))
      .onConflict(['blockchain_id', 'address'])
      .merge(['name', 'symbol', 'decimals', 'standard', 'logo_url', 'is_native', 'network', 'updated_at']);
    return blockchainId;
  });
}
