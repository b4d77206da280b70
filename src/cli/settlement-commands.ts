import { Command } from 'commander';
import { devChainAccount } from '../platform/chain/dev-accounts';
import { printFromServices } from './with-services';

/** `keel reconcile`, `keel settlement deploy`, `migrate` and `exit`: the operator's side of on-chain settlement. */
export function registerSettlementCommands(program: Command): void {
  program
    .command('reconcile')
    .description("Compare every wallet's ledger with the chain, per asset, at one block: its custody account with its address, its trading account with its balance in the settlement contract; exits 1 on any difference")
    .option('--chain <chain>', 'blockchain id, chain id or slug; default every registered chain')
    .option('--organization <id>', 'only the wallets of this organisation')
    .option('--json', 'print only the JSON result: no progress on the terminal')
    .action((opts: { chain?: string; organization?: string; json?: boolean }) =>
      printFromServices(async ({ services, networks, progress }) => {
        const chain = opts.chain ? networks.find(opts.chain) : undefined;
        if (opts.chain && !chain) throw new Error(`Unknown blockchain '${opts.chain}'`);
        const reports = [];
        const chains = chain ? [chain] : networks.all();
        for (const [i, network] of chains.entries()) {
          const where = `reconciling chain ${network.spec.slug} (${i + 1}/${chains.length})`;
          progress.update(`${where}: reading the ledger…`);
          reports.push(await services.settlementReconciler.reconcile(network, { organizationId: opts.organization, onProgress: (checked, total) => progress.update(`${where}: ${checked}/${total} balances read on chain`) }));
        }
        progress.done();
        const differences = reports.flatMap((r) => r.differences);
        for (const d of differences) {
          process.stderr.write(`DIFFERENCE chain=${d.blockchainId} wallet=${d.walletId} ${d.address} ${d.symbol} ${d.account}: ledger expects ${d.expected}, ${d.account === 'trading' ? 'contract' : 'address'} holds ${d.onChain} (difference ${d.difference})\n`);
        }
        if (differences.length) process.exitCode = 1;
        return { clean: differences.length === 0, checked: reports.reduce((n, r) => n + r.checked, 0), chains: reports };
      }, opts),
    );

  const settlement = program.command('settlement').description('On-chain settlement of trades');
  settlement
    .command('deploy')
    .description(
      "Deploy the settlement contract on a chain and record it (dev chains get one at start). The deployer key is SETTLEMENT_DEPLOYER_KEY (dev chains: dev account #0). A chain's contract is replaced only with --replace, and not while the one it replaced before is not migrated (keel settlement migrate)",
    )
    .requiredOption('--chain <chain>', 'blockchain id, chain id or slug')
    .option('--replace', "replace the chain's recorded contract (it is kept as the previous one until `keel settlement migrate` hands back what it holds)")
    .option('--operator <address>', 'the operator address; default the address of SETTLEMENT_OPERATOR_KEY')
    .option('--fee-recipient <address>', 'where fees go; default SETTLEMENT_FEE_RECIPIENT')
    .option('--exit-delay <seconds>', "seconds between an account's exit request and its own withdrawal; default SETTLEMENT_EXIT_DELAY_SECONDS")
    .option('--json', 'print only the JSON result: no progress on the terminal')
    .action((opts: { chain: string; operator?: string; feeRecipient?: string; exitDelay?: string; replace?: boolean; json?: boolean }) =>
      printFromServices(async ({ services, networks, progress }) => {
        const network = networks.find(opts.chain);
        if (!network) throw new Error(`Unknown blockchain '${opts.chain}'`);
        const key = process.env.SETTLEMENT_DEPLOYER_KEY ?? (network.spec.dev ? devChainAccount(0).privateKey : undefined);
        if (!key) throw new Error('SETTLEMENT_DEPLOYER_KEY is required on a configured chain');
        const exitDelaySeconds = opts.exitDelay === undefined ? undefined : Number(opts.exitDelay);
        if (exitDelaySeconds !== undefined && !(Number.isSafeInteger(exitDelaySeconds) && exitDelaySeconds >= 0)) throw new Error('--exit-delay must be a whole number of seconds');
        progress.update(`deploying the settlement contract on ${network.spec.slug}: waiting for its transaction to be mined…`);
        return services.settlementDeployments.deploy(network, key, { operator: opts.operator, feeRecipient: opts.feeRecipient, exitDelaySeconds, replace: opts.replace });
      }, opts),
    );
  settlement
    .command('migrate')
    .description("Move a chain's trading balances from the per-batch funding flow into the settlement contract: release what the previous contract holds, then deposit each wallet's trading balance (less unsettled trades) from its address. Run with the settlement worker stopped; again until no line is refused")
    .requiredOption('--chain <chain>', 'blockchain id, chain id or slug')
    .option('--gas-sponsor <walletId>', "a wallet of each organisation that pays the deposits' gas for its wallets without coin (ignored for other organisations)")
    .action((opts: { chain: string; gasSponsor?: string }) =>
      printFromServices(async ({ services, networks }) => {
        const network = networks.find(opts.chain);
        if (!network) throw new Error(`Unknown blockchain '${opts.chain}'`);
        const report = await services.tradingMigration.migrate(network, { gasSponsorWalletId: opts.gasSponsor });
        for (const l of report.lines.filter((x) => x.refused)) process.stderr.write(`REFUSED wallet=${l.walletId} ${l.address} ${l.symbol} ${l.lacking}: ${l.refused}\n`);
        if (report.lines.some((l) => l.refused)) process.exitCode = 1;
        return report;
      }),
    );
  settlement
    .command('exit')
    .description("The contract's exit hatch for a custody customer, from the wallet's own address (its coin pays the gas): the first run asks to exit, a run after the exit delay takes every balance out to the wallet's address and moves it from trading to custody in the ledger")
    .requiredOption('--chain <chain>', 'blockchain id, chain id or slug')
    .requiredOption('--organization <id>', "the wallet's organisation")
    .requiredOption('--wallet <id>', 'master wallet or deposit address id')
    .action((opts: { chain: string; organization: string; wallet: string }) =>
      printFromServices(async ({ services, networks }) => {
        const network = networks.find(opts.chain);
        if (!network) throw new Error(`Unknown blockchain '${opts.chain}'`);
        return services.tradingExit.run(network, opts.organization, opts.wallet);
      }),
    );
}
