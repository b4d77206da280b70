import type { Command } from 'commander';
import { address, isAddress } from '@solana/kit';
import { parseUnits } from '../platform/decimal';
import { startSolanaDevnet } from '../platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../platform/solana-devnet/genesis';
import { fundFromSolanaFaucet } from '../platform/solana-devnet/faucet';

/** Solana's usual local RPC port. */
const DEFAULT_PORT = 8899;

/**
 * `keel dev solana-devnet`: the sandbox Solana network in the foreground (docs/solana.md), and
 * `keel dev solana-fund`: its faucet, from another process.
 */
export function registerSolanaCommands(dev: Command): void {
  dev
    .command('solana-devnet')
    .description('Run the sandbox Solana network (LiteSVM behind Solana JSON-RPC on 127.0.0.1) until interrupted')
    .option('--port <port>', 'JSON-RPC port (0: any free port)', String(DEFAULT_PORT))
    .option('--slot-ms <ms>', 'milliseconds a slot lasts', '400')
    .option('--data-dir <dir>', 'where its journal is kept (it comes back as it was); default none: from genesis every time')
    .action(async (opts: { port: string; slotMs: string; dataDir?: string }) => {
      const devnet = await startSolanaDevnet({ port: Number(opts.port), slotMs: Number(opts.slotMs), dataDir: opts.dataDir });
      const stop = () => void devnet.stop().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      process.stdout.write(
        `${JSON.stringify({ rpcUrl: devnet.rpcUrl, history: devnet.history, faucet: devnet.faucet, mints: devnet.mints.map((m) => ({ symbol: m.symbol, address: m.address, decimals: m.decimals })) })}\n`,
      );
    });

  dev
    .command('solana-fund')
    .description('Send SOL or a test token (USDC, USDT) from the sandbox Solana network\'s faucet')
    .requiredOption('--address <address>', 'recipient (a Solana address)')
    .option('--asset <asset>', 'SOL, USDC, USDT or a test mint address', 'SOL')
    .requiredOption('--amount <amount>', 'whole units, e.g. 250.5')
    .option('--rpc-url <url>', 'the network', `http://127.0.0.1:${DEFAULT_PORT}`)
    .action(async (opts: { address: string; asset: string; amount: string; rpcUrl: string }) => {
      if (!isAddress(opts.address)) throw new Error(`'${opts.address}' is not a Solana address`);
      const mint = opts.asset.toUpperCase() === 'SOL' ? undefined : DEVNET_MINTS.find((m) => m.symbol === opts.asset.toUpperCase() || m.address === opts.asset);
      if (opts.asset.toUpperCase() !== 'SOL' && !mint) throw new Error(`Unknown asset '${opts.asset}': SOL, ${DEVNET_MINTS.map((m) => m.symbol).join(', ')}`);
      const amount = parseUnits(opts.amount, mint ? mint.decimals : 9);
      if (amount === null || amount <= 0n) throw new Error(`'${opts.amount}' is not a positive amount of ${opts.asset}`);
      const signature = await fundFromSolanaFaucet(opts.rpcUrl, { to: address(opts.address), amount, ...(mint ? { mint: { address: mint.address, decimals: mint.decimals } } : {}) });
      process.stdout.write(`${JSON.stringify({ signature, asset: mint?.symbol ?? 'SOL', amount: amount.toString() })}\n`);
    });
}
