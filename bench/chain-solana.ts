import {
  Address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  KeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { findAssociatedTokenPda, getTransferCheckedInstruction } from '@solana-program/token';
import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { formatChainsConfig } from '../src/modules/chains/chain-config';
import { devSolanaSpec } from '../src/modules/chains/chain-networks';
import { DepositWatcher } from '../src/modules/deposits/deposit-watcher';
import { startSolanaDevnet } from '../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../src/platform/solana-devnet/genesis';
import { TOKEN_PROGRAM } from '../src/platform/chain-port/solana-chain';
import { median, percentile } from './support';
import { startChainBenchKeel } from './chain-keel';
import { TransactionSender } from '../src/modules/withdrawals/transaction-sender';

/** Keel's sandbox Solana network as Keel starts it (DEV_SOLANA_SLOT_MS, DEV_SOLANA_FINALIZED_LAG defaults). */
const SLOT_MS = 400;
const FINALIZED_LAG = 32;
const SEND_CONCURRENCY = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Keel's Solana deposit watcher (the one Keel runs per cluster) against Keel's sandbox Solana
 * network (LiteSVM, in this process, slots of 400 ms, finalized 32 slots behind the head).
 * - Indexing throughput: `perRun` USDC transfers (SPL TransferChecked, each its own signed
 *   transaction, sent over JSON-RPC) to `addresses` watched deposit addresses land while no watcher
 *   runs; once their slots are finalized, one watcher catches up, and the figure is deposits recorded
 *   (rows committed, ledger credits, events in the outbox) per second. Median of `runs`.
 * - Detection latency: with the watcher running at the default CHAIN_POLL_INTERVAL_MS, `samples`
 *   USDC deposits sent at random intervals (0 to 2 poll intervals apart, so several are in flight
 *   while earlier ones await finality): from the moment the deposit's slot became finalized (the
 *   network's finalized slot seen reaching it, sampled every millisecond in this process) to the
 *   moment its committed outbox row is seen (polled every 2 ms). p50 and p99.
 * - Withdrawals: with Keel's transaction sender running as the worker role runs it (its Solana
 *   sender, the custody ledger's outcome listener, the default TRANSFER_POLL_INTERVAL_MS), `withdrawals`
 *   transfers recorded one after another through the transfer service (the write path: funds checked,
 *   ledger debited), alternately USDC (to a fresh recipient: its token account created, rent paid by
 *   the sender) and SOL (to a fresh recipient: a new system account), one line each. The figure is
 *   transfers confirmed (the line's transaction finalized, status CONFIRMED) per second from the first
 *   broadcast (a line first seen SUBMITTED) to the last CONFIRMED, and p50/p99 of recorded (the create
 *   call returned) to CONFIRMED seen (polled every 5 ms).
 */
export async function runSolana(args: string[]): Promise<object> {
  const perRun = Number(args[0] ?? 2000);
  const runs = Number(args[1] ?? 3);
  const samples = Number(args[2] ?? 100);
  const addresses = Number(args[3] ?? 500);
  const withdrawals = Number(args[4] ?? 100);

  const devnet = await startSolanaDevnet({ slotMs: SLOT_MS, finalizedLag: FINALIZED_LAG });
  const { config, keel } = await startChainBenchKeel('chain_solana', formatChainsConfig([devSolanaSpec(devnet.rpcUrl)]));
  if (config.DEV_SOLANA_SLOT_MS !== SLOT_MS || config.DEV_SOLANA_FINALIZED_LAG !== FINALIZED_LAG) throw new Error('the sandbox defaults changed: update SLOT_MS and FINALIZED_LAG');
  const { services, platform } = keel;
  const db = platform.db;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const network = services.networks.solanaNetworks()[0];
    const org = await onboardOrganization(db, services, { name: 'bench', tier: 'Business', proAccess: false });
    const wallet = await services.masterWallets.create(org.orgId, { blockchainId: network.blockchainId, name: 'bench' });
    const targets: string[] = [];
    for (let i = 0; i < addresses; i++) targets.push((await services.addresses.create(org.orgId, wallet.id, {})).address);

    // The sender holds SOL for fees and USDC; every target gets its token account first (before the watcher starts).
    const usdc = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
    const funder: KeyPairSigner = await generateKeyPairSigner();
    await devnet.fund({ to: funder.address, amount: 1_000_000_000_000n });
    await devnet.fund({ to: funder.address, mint: { address: usdc.address, decimals: usdc.decimals }, amount: 10n ** 15n });
    for (const to of targets) await devnet.fund({ to: to as Address, mint: { address: usdc.address, decimals: usdc.decimals }, amount: 1n });
    const [source] = await findAssociatedTokenPda({ owner: funder.address, mint: usdc.address, tokenProgram: TOKEN_PROGRAM });
    const destinations = await Promise.all(targets.map(async (owner) => (await findAssociatedTokenPda({ owner: owner as Address, mint: usdc.address, tokenProgram: TOKEN_PROGRAM }))[0]));
    const untilFinalized = async (slot: number) => {
      while (devnet.slot('finalized') < slot) await sleep(20);
    };
    await untilFinalized(devnet.slot('processed'));

    const rpc = createSolanaRpc(devnet.rpcUrl);
    let amount = 1_000_000n;
    /** A signed USDC transfer to target i (a distinct amount each, so a distinct signature). */
    const transfer = async (i: number, latest: Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0]) => {
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(funder, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
        (m) => appendTransactionMessageInstructions([getTransferCheckedInstruction({ source, mint: usdc.address, destination: destinations[i % destinations.length], authority: funder, amount: amount++, decimals: usdc.decimals })], m),
      );
      const tx = await signTransactionMessageWithSigners(message);
      return { signature: getSignatureFromTransaction(tx), wire: getBase64EncodedWireTransaction(tx) };
    };
    const send = async (wire: string) => rpc.sendTransaction(wire as never, { encoding: 'base64', skipPreflight: true }).send();
    const latestBlockhash = async () => (await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()).value;

    const watcher = new DepositWatcher(network, services.chainActivity, services.chains, services.watchedWallets, { pollIntervalMs: config.CHAIN_POLL_INTERVAL_MS, batchBlocks: config.CHAIN_SCAN_BATCH_BLOCKS, reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS }, platform.logger);
    await watcher.tick(); // takes its starting place at the finalized slot
    while ((await watcher.tick()) > 0) {
      // up to the finalized head
    }
    const countRows = async () => Number((await db('chain_transfers').where({ blockchainId: network.blockchainId }).count({ n: '*' }))[0].n);

    const throughput: number[] = [];
    for (let r = 0; r < runs; r++) {
      for (let i = 0; i < perRun; i += SEND_CONCURRENCY) {
        const latest = await latestBlockhash();
        const batch = await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, perRun - i) }, (_, k) => transfer(i + k, latest)));
        await Promise.all(batch.map((t) => send(t.wire)));
      }
      await untilFinalized(devnet.slot('processed'));
      const before = await countRows();
      const started = process.hrtime.bigint();
      while ((await countRows()) - before < perRun) await watcher.tick();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      throughput.push(((await countRows()) - before) / seconds);
    }

    // Latency: the watcher polls on its own schedule, as in production. When each slot became finalized, seen in this process.
    const finalizedAt = new Map<number, number>();
    let lastFinal = devnet.slot('finalized');
    sampler = setInterval(() => {
      const final = devnet.slot('finalized');
      const now = Date.now();
      for (let s = lastFinal + 1; s <= final; s++) finalizedAt.set(s, now);
      lastFinal = Math.max(lastFinal, final);
    }, 1);
    const loop = watcher.start();
    const pending = new Set<string>();
    const seen = new Map<string, { at: number; slot: number }>();
    let sending = true;
    const watching = (async () => {
      while (sending || pending.size) {
        if (pending.size) {
          const rows: { hash: string; slot: string }[] = await db('outbox_events')
            .whereRaw(`envelope->'data'->>'hash' = ANY(?)`, [[...pending]])
            .select(db.raw(`envelope->'data'->>'hash' AS hash`), db.raw(`envelope->'data'->>'blockNumber' AS slot`));
          const at = Date.now();
          for (const row of rows) {
            if (!pending.delete(row.hash)) continue;
            seen.set(row.hash, { at, slot: Number(row.slot) });
          }
        }
        await sleep(2);
      }
    })();
    for (let i = 0; i < samples; i++) {
      const t = await transfer(i, await latestBlockhash());
      pending.add(t.signature);
      await send(t.wire);
      await sleep(Math.floor(Math.random() * 2 * config.CHAIN_POLL_INTERVAL_MS));
    }
    sending = false;
    await watching;
    await loop.stop();
    const latencies = [...seen.values()].map(({ at, slot }) => {
      const final = finalizedAt.get(slot);
      if (final === undefined) throw new Error(`slot ${slot}: its finalization was not seen`);
      return at - final;
    });
    const sorted = latencies.sort((a, b) => a - b);
    const sent = await measureWithdrawals(withdrawals, { devnet, keel, config, orgId: org.orgId, blockchainId: network.blockchainId, watcher, untilFinalized });
    return {
      benchmark: 'chain',
      chain: `Keel's sandbox Solana network (LiteSVM, in process; slots of ${SLOT_MS} ms, finalized ${FINALIZED_LAG} slots behind the head)`,
      indexing: { transfersPerRun: perRun, runs, watchedAddresses: addresses, depositsPerSecondRuns: throughput.map(Math.round), depositsPerSecondMedian: Math.round(median(throughput)) },
      detectionLatency: { samples: sorted.length, from: 'slot finalized', pollIntervalMs: config.CHAIN_POLL_INTERVAL_MS, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] },
      withdrawals: sent.detail,
      withdrawalsConfirmedPerSecond: sent.perSecond,
    };
  } finally {
    if (sampler) clearInterval(sampler);
    await keel.stop();
    await devnet.stop();
  }
}

type BenchKeel = Awaited<ReturnType<typeof startChainBenchKeel>>;

/** The withdrawals row (see runSolana): Keel's write path records, Keel's transaction sender sends through the chain port. */
async function measureWithdrawals(
  count: number,
  ctx: { devnet: Awaited<ReturnType<typeof startSolanaDevnet>>; keel: BenchKeel['keel']; config: BenchKeel['config']; orgId: string; blockchainId: string; watcher: DepositWatcher; untilFinalized: (slot: number) => Promise<void> },
) {
  const { devnet, keel, config, orgId, blockchainId, watcher } = ctx;
  const { services, platform } = keel;
  const db = platform.db;
  const usdc = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
  const wallet = await services.masterWallets.create(orgId, { blockchainId, name: 'bench payouts' });
  // The withdrawals are asked for by the organisation's admin key, as over the API.
  const adminKeyId: string = (await db('api_keys').where({ organizationId: orgId, name: 'admin' }).first('id')).id;
  // Funded on chain and credited to the custody ledger by the deposit watcher (at finalized), as any deposit.
  const before = Number((await db('chain_transfers').where({ blockchainId, direction: 'incoming' }).count({ n: '*' }))[0].n);
  await devnet.fund({ to: wallet.walletAddress as Address, amount: 1_000_000_000_000n });
  await devnet.fund({ to: wallet.walletAddress as Address, mint: { address: usdc.address, decimals: usdc.decimals }, amount: 10n ** 12n });
  await ctx.untilFinalized(devnet.slot('processed'));
  while (Number((await db('chain_transfers').where({ blockchainId, direction: 'incoming' }).count({ n: '*' }))[0].n) - before < 2) {
    if ((await watcher.tick()) === 0) await sleep(50);
  }
  const assets: { id: string; symbol: string }[] = await db('assets').where({ blockchainId }).select('id', 'symbol');
  const assetId = (symbol: string) => assets.find((a) => a.symbol === symbol)!.id;

  const sender = new TransactionSender(db, platform.outbox, services.networks, services.chains, services.sendingWallets, { pollIntervalMs: config.TRANSFER_POLL_INTERVAL_MS, bumpAfterMs: config.TRANSFER_FEE_BUMP_AFTER_MS, bumpPercent: config.TRANSFER_FEE_BUMP_PERCENT }, platform.logger);
  sender.onOutcome(services.custodyLedgerSync);
  const loop = sender.start();
  const recordedAt = new Map<string, number>();
  const confirmedAt = new Map<string, number>();
  let firstBroadcast: number | undefined;
  let failed = 0;
  let recording = true;
  const polling = (async () => {
    while (recording || confirmedAt.size + failed < count) {
      const rows: { id: string; status: string }[] = await db('transfers').where({ masterWalletId: wallet.id }).whereIn('status', ['SUBMITTED', 'CONFIRMED', 'FAILED']).select('id', 'status');
      const at = Date.now();
      for (const row of rows) {
        if (firstBroadcast === undefined) firstBroadcast = at;
        if (row.status === 'FAILED') throw new Error(`transfer ${row.id} failed`);
        if (row.status === 'CONFIRMED' && !confirmedAt.has(row.id)) confirmedAt.set(row.id, at);
      }
      await sleep(5);
    }
  })();
  let usdcLines = 0;
  try {
    for (let i = 0; i < count; i++) {
      const recipient = (await generateKeyPairSigner()).address;
      const line = i % 2 === 0 ? { assetId: assetId('USDC'), recipient, amount: '1.5' } : { assetId: assetId('SOL'), recipient, amount: '0.01' };
      if (i % 2 === 0) usdcLines++;
      const transfer = await services.transfers.create(orgId, adminKeyId, { masterWalletId: wallet.id }, { assets: [line] });
      recordedAt.set(transfer.id, Date.now());
    }
  } finally {
    recording = false;
  }
  await polling;
  await loop.stop();
  const last = Math.max(...confirmedAt.values());
  const perSecond = Math.round((confirmedAt.size / ((last - firstBroadcast!) / 1000)) * 100) / 100;
  const latencies = [...confirmedAt].map(([id, at]) => at - recordedAt.get(id)!).sort((a, b) => a - b);
  return {
    perSecond,
    detail: {
      transfers: count,
      usdcToNewTokenAccounts: usdcLines,
      solToNewAccounts: count - usdcLines,
      confirmed: confirmedAt.size,
      pollIntervalMs: config.TRANSFER_POLL_INTERVAL_MS,
      seconds: Math.round(last - firstBroadcast!) / 1000,
      confirmedPerSecond: perSecond,
      recordedToConfirmedP50Ms: percentile(latencies, 50),
      recordedToConfirmedP99Ms: percentile(latencies, 99),
      recordedToConfirmedMaxMs: latencies[latencies.length - 1],
    },
  };
}
