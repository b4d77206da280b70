import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { loadConfig } from '../platform/config';
import { createDb, ensureDatabase, migrate } from '../platform/db/knex';
import { createLogger } from '../platform/logger';
import { loggedMessage } from '../platform/logged-error';
import { onboardOrganization } from '../modules/api-keys/onboarding';
import type { Tier } from '../platform/auth/permissions';
import { printFromServices } from './with-services';
import { Check, formatCheck, runDoctor } from './doctor';
import { registerOperatorCommands } from './operator-commands';
import { registerAmlCommands } from './aml-commands';
import { registerSettlementCommands } from './settlement-commands';
import { registerQuotaCommands } from './quota-commands';
import { registerSolanaCommands } from './solana-commands';
import { resealColumn, SealedColumn } from '../platform/crypto/reseal';
import { loadSecretBox } from '../platform/crypto/secret-box';
import { SEALED_MNEMONICS } from '../modules/wallets/wallet-keys';
import { SEALED_WEBHOOK_SECRETS } from '../modules/webhooks/webhook-signing';

/**
 * The server and the GraphQL schemas, loaded by the commands that use them: the others (org create,
 * dev fund, market create, …) start in about half the time without their modules (Fastify, Apollo,
 * the resolvers).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadApp = (): typeof import('../app') => require('../app');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadSchema = (): typeof import('../schema') => require('../schema');

const program = new Command();
program.name('keel').description('Keel: wallets, payments and an order-book exchange');

program
  .command('start')
  .description('Start Keel (all roles by default)')
  .option('--roles <roles>', 'comma-separated roles: api, orderbook, worker')
  .action(async (opts: { roles?: string }) => {
    const config = loadConfig(process.env, opts.roles ? { KEEL_ROLES: opts.roles } : {});
    const logger = createLogger(config.LOG_LEVEL);
    const { startKeel } = loadApp();
    const keel = await startKeel(config, logger);
    logger.info({ core: keel.core?.url, pro: keel.pro?.url, env: config.KEEL_ENV, nodeId: keel.services.shardLeadership.nodeId, roles: config.KEEL_ROLES }, 'keel started');
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down: draining requests');
      const timer = setTimeout(() => {
        logger.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.SHUTDOWN_TIMEOUT_MS);
      timer.unref();
      await keel.stop();
      logger.info('stopped');
      process.exit(0);
    };
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
  });

program
  .command('migrate')
  .description('Create the database if missing and apply migrations')
  .action(async () => {
    const config = loadConfig();
    await ensureDatabase(config.DATABASE_URL);
    const logger = createLogger(config.LOG_LEVEL);
    const db = createDb(config.DATABASE_URL, 2, { logger });
    // A migration that seals data (012) needs the key-encryption key.
    const applied = await migrate(db, { secretBox: loadSecretBox(config, logger) });
    await db.destroy();
    console.log(JSON.stringify({ applied }));
  });

const org = program.command('org').description('Organisations');
org
  .command('create')
  .description('Create an organisation and print its first API keys (shown once)')
  .requiredOption('--name <name>', 'organisation name')
  .addOption(new Option('--tier <tier>', 'rate-limit tier').choices(['Starter', 'Pro', 'Business']).default('Starter'))
  .option('--no-pro', 'do not grant order-book (Pro) access')
  .option('--json', 'print JSON (the default output)')
  .action((opts: { name: string; tier: Tier; pro: boolean }) =>
    printFromServices(({ services, platform }) => onboardOrganization(platform.db, services, { name: opts.name, tier: opts.tier, proAccess: opts.pro })),
  );

const dev = program.command('dev').description('Sandbox helpers');
dev
  .command('fund')
  .description('Send dev coins or test tokens from the dev chain faucet to an address (sandbox only)')
  .requiredOption('--address <address>', 'recipient, e.g. a master wallet or deposit address')
  .option('--asset <asset>', 'asset symbol or id (USDC, USDT, DAI, ETH; test NFTs KNFT, KITEM; on the sandbox Solana network SOL, USDC, USDT); default the native coin')
  .requiredOption('--amount <amount>', 'whole units, e.g. 250.5 (an NFT: how many tokens)')
  .option('--token-id <id>', 'ERC-1155 test collection (KITEM): the token id to mint')
  .option('--blockchain <chain>', 'blockchain id, chain id or slug (solana-devnet: the sandbox Solana network); default the first dev chain')
  .action((opts: { address: string; asset?: string; amount: string; tokenId?: string; blockchain?: string }) =>
    printFromServices(async ({ services, networks }) => {
      const blockchainId = opts.blockchain ? networks.findBlockchainId(opts.blockchain) : undefined;
      if (opts.blockchain && !blockchainId) throw new Error(`Unknown blockchain '${opts.blockchain}'`);
      return services.devFaucet.fund({ blockchainId, address: opts.address, asset: opts.asset, amount: opts.amount, tokenId: opts.tokenId });
    }),
  );
registerSolanaCommands(dev);

program
  .command('schema')
  .description('Write the GraphQL SDL of both hosts to schema/')
  .option('--out <dir>', 'output folder', 'schema')
  .action(async (opts: { out: string }) => {
    const { buildHostSchema, printHostSchema, SCHEMA_FILES } = loadSchema();
    mkdirSync(opts.out, { recursive: true });
    for (const host of ['core', 'pro'] as const) {
      writeFileSync(join(opts.out, SCHEMA_FILES[host]), printHostSchema(await buildHostSchema(host)));
    }
    console.log(`wrote ${Object.values(SCHEMA_FILES).map((f) => join(opts.out, f)).join(', ')}`);
  });

program
  .command('doctor')
  .description('Check what Keel needs (PostgreSQL, migrations, Redis, the master key, each chain\'s RPC) and print what to fix, one line per check; exits 1 when a check fails')
  .option('--json', 'print {ok, checks} as one JSON line')
  .action(async (opts: { json?: boolean }) => {
    let checks: Check[];
    try {
      checks = await runDoctor(loadConfig(process.env, { LOG_LEVEL: 'silent' }));
    } catch (error) {
      checks = [{ check: 'configuration', status: 'fail', detail: (error instanceof Error ? error.message : String(error)).replace(/\n\s*/g, ' '), fix: 'correct the environment variables named (see Configuration in the README)' }];
    }
    const failed = checks.some((c) => c.status === 'fail');
    if (opts.json) console.log(JSON.stringify({ ok: !failed, checks }));
    else for (const c of checks) console.log(formatCheck(c));
    process.exitCode = failed ? 1 : 0;
  });

registerOperatorCommands(program);
registerAmlCommands(program);
registerSettlementCommands(program);
registerQuotaCommands(program);

const secrets = program.command('secrets').description('Secrets at rest');
secrets
  .command('reseal')
  .description('Re-seal every wallet and webhook secret under KEEL_MASTER_KEY (the old key in KEEL_MASTER_KEY_PREVIOUS)')
  .option('--json', 'print only the JSON result: no progress on the terminal')
  .action((opts: { json?: boolean }) =>
    printFromServices(async ({ platform, progress }) => {
      const reseal = (what: string, column: SealedColumn) =>
        resealColumn(platform.db, platform.secretBox, column, (scanned, resealed) => progress.update(`re-sealing ${what}: ${scanned} read, ${resealed} re-sealed`));
      return {
        keyId: platform.secretBox.currentKeyId,
        resealed: { masterWallets: await reseal('master wallet mnemonics', SEALED_MNEMONICS), webhookSecrets: await reseal('webhook signing secrets', SEALED_WEBHOOK_SECRETS) },
      };
    }, opts),
  );

program.parseAsync(process.argv).catch((e: unknown) => {
  // The safe message: a database error's without knex's SQL, ethers' without its request and payload.
  console.error(e instanceof Error ? loggedMessage(e) : String(e));
  process.exit(1);
});
