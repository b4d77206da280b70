import { Command, Option } from 'commander';
import type { Services } from '../services';
import type { ChainNetworks } from '../modules/chains/chain-networks';
import { MarketStatus } from '../modules/markets/market.domain';
import { issueOperatorKey } from '../modules/api-keys/operator-key';
import { printFromServices } from './with-services';

interface MarketFees {
  minNotional?: string;
  makerFee?: string;
  takerFee?: string;
}

/**
 * The base and quote assets of a new market by symbol: on the chain named, or else on the first
 * registered chain that has both.
 */
async function marketAssets(services: Services, networks: ChainNetworks, base: string, quote: string, blockchain?: string): Promise<{ baseAssetId: string; quoteAssetId: string }> {
  const chain = blockchain ? networks.find(blockchain) : undefined;
  if (blockchain && !chain) throw new Error(`Unknown blockchain '${blockchain}'`);
  for (const network of chain ? [chain] : networks.all()) {
    const assets = await services.chains.assetsOf(network.blockchainId);
    const bySymbol = (symbol: string) => assets.find((a) => a.symbol.toUpperCase() === symbol.toUpperCase());
    const [b, q] = [bySymbol(base), bySymbol(quote)];
    if (b && q) return { baseAssetId: b.id, quoteAssetId: q.id };
  }
  throw new Error(`No ${chain ? `chain '${blockchain}'` : 'registered chain'} has both ${base} and ${quote}`);
}

/** Market management and operator keys: the operator's commands for what every organisation shares. */
export function registerOperatorCommands(program: Command): void {
  const market = program.command('market').description('Markets of the order book (shared by every organisation)');
  market
    .command('create')
    .description('Open a market BASE-QUOTE and print it as the API shows it')
    .requiredOption('--base <symbol>', 'base asset symbol, e.g. ETH')
    .requiredOption('--quote <symbol>', 'quote asset symbol, e.g. USDC')
    .option('--blockchain <chain>', 'blockchain id, chain id or slug; default the first chain with both assets')
    .option('--symbol <symbol>', 'the market symbol, as the API takes it (e.g. a second book of the pair on another chain); default BASE-QUOTE')
    .option('--tick-size <decimal>', 'price increment in quote', '0.01')
    .option('--lot-size <decimal>', 'quantity increment in base', '0.001')
    .option('--min-notional <decimal>', 'smallest price × quantity, in quote')
    .option('--maker-fee <rate>', 'e.g. 0.001')
    .option('--taker-fee <rate>', 'e.g. 0.002')
    .option('--json', 'print JSON (the default output)')
    .action((opts: { base: string; quote: string; blockchain?: string; symbol?: string; tickSize: string; lotSize: string } & MarketFees) =>
      printFromServices(async ({ services, networks }) => {
        const assets = await marketAssets(services, networks, opts.base, opts.quote, opts.blockchain);
        const symbol = (opts.symbol ?? `${opts.base}-${opts.quote}`).toUpperCase();
        return services.markets.create({ symbol, ...assets, tickSize: opts.tickSize, lotSize: opts.lotSize, minNotional: opts.minNotional, makerFee: opts.makerFee, takerFee: opts.takerFee });
      }),
    );
  market
    .command('update')
    .description('Change a market\'s status, fees or minimum notional and print it as the API shows it')
    .argument('<symbol>', 'market symbol, e.g. ETH-USDC')
    .addOption(new Option('--status <status>', 'HALTED refuses new orders').choices(Object.values(MarketStatus)))
    .option('--min-notional <decimal>', 'smallest price × quantity, in quote')
    .option('--maker-fee <rate>', 'e.g. 0.001')
    .option('--taker-fee <rate>', 'e.g. 0.002')
    .option('--json', 'print JSON (the default output)')
    .action((symbol: string, opts: { status?: MarketStatus } & MarketFees) =>
      printFromServices(({ services }) => services.markets.update(symbol, { status: opts.status, minNotional: opts.minNotional, makerFee: opts.makerFee, takerFee: opts.takerFee })),
    );

  const operator = program.command('operator').description("The operator's own organisation");
  operator
    .command('key')
    .description('Operator API keys')
    .command('create')
    .description("Mint a pro-host key of the operator's organisation, the only one that manages markets over the API; printed once")
    .option('--json', 'print JSON (the default output)')
    .action(() => printFromServices(({ services }) => issueOperatorKey(services)));
}
