/**
 * What the Solana transfer API tests share: Keel (in this process) with a sandbox Solana network as
 * one of its chains, the cluster's id and assets as an organisation sees them, SOL and tokens from
 * the faucet, a transfer waited on until it settles, and a wallet's custody ledger balance.
 */
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import type { Instruction, TransactionSigner } from '@solana/kit';
import { SolanaChain } from '../../../src/platform/chain-port/solana-chain';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import type { Config } from '../../../src/platform/config';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';

export interface SolanaKeel {
  devnet: SolanaDevnet;
  chain: SolanaChain;
  t: TestKeel;
}

/** Short slots and finality, and Keel polling fast. */
export async function startSolanaKeel(overrides: Partial<Config> = {}): Promise<SolanaKeel> {
  const devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 16 });
  const t = await startTestKeel({
    KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]),
    RATE_LIMIT_SCALE: 100,
    CHAIN_POLL_INTERVAL_MS: 100,
    TRANSFER_POLL_INTERVAL_MS: 100,
    OUTBOX_POLL_INTERVAL_MS: 20,
    ...overrides,
  });
  return { devnet, chain: new SolanaChain({ rpcUrl: devnet.rpcUrl }), t };
}

/** The Solana cluster's id and its assets by symbol. */
export async function solanaCluster(org: TestOrg): Promise<{ solanaId: string; assets: Record<string, { id: string }> }> {
  const solanaId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
  const assets = Object.fromEntries((await org.core.get(`/v1/assets?blockchainId=${solanaId}&limit=100`)).body.data.map((a: { symbol: string; id: string }) => [a.symbol, a]));
  return { solanaId, assets };
}

/** Funds from the faucet and waits until the deposit is recorded at finalized (and so credited to the custody ledger). */
export async function fundFromFaucet(t: TestKeel, org: TestOrg, solanaId: string, to: string, amount: string, asset?: string): Promise<void> {
  const res = await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: to, amount, ...(asset ? { asset } : {}) });
  expect(res.status).toBe(200);
  await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: res.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 60_000);
}

/** The transfer once it is CONFIRMED, FAILED or REJECTED. */
export function settledTransfer(org: TestOrg, transferId: string) {
  return eventually(async () => {
    const res = await org.core.get(`/v1/transfers/${transferId}`);
    return ['CONFIRMED', 'FAILED', 'REJECTED'].includes(res.body.data.status) && res.body.data;
  }, 60_000, 200);
}

/** What the wallet's custody ledger lets it spend of the asset. */
export async function custodyBalance(t: TestKeel, walletId: string, assetId: string): Promise<bigint> {
  return (await t.keel.services.ledger.balance(t.keel.platform.db, walletId, assetId, 'custody')).available;
}

/** Sends one transaction of `instructions` whose fee `payer` pays (every signer they name signs it) and waits until it is confirmed, succeeded: its id. */
export async function sendInstructions(chain: SolanaChain, payer: TransactionSigner, instructions: Instruction[]): Promise<string> {
  const prepared = await chain.prepareInstructions(payer, instructions, { fee: 0n, accountCreation: 0n, nativeNeeded: 0n });
  await chain.broadcast(prepared);
  const outcome = await eventually(async () => {
    const o = await chain.outcome(prepared);
    // Confirmed at least: a caller then reads what it did at 'confirmed'.
    return o.state === 'landed' && o.finality !== 'seen' && o;
  }, 30_000);
  expect(outcome).toMatchObject({ failed: false });
  return prepared.txId;
}
