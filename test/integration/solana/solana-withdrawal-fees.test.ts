/**
 * Solana withdrawal fees charged as paid (issue 35), against the sandbox Solana network with real
 * PostgreSQL and Redis: two USDC withdrawals to the same recipient without a token account are each
 * prepared with that account's rent (the transaction creates it idempotently), but only the first to
 * land pays it. Each line is charged what its finalized transaction cost the sender on chain (its
 * fee and the rent of the accounts it created), so the rent is charged once, and the custody
 * ledger's SOL equals the chain's.
 *
 * Both lines are prepared before either is sent: the first line's transaction is recorded and its
 * step ends before the broadcast (failpoint throw-solana-transfer:recorded, as a crash would leave
 * it); the second is prepared while the token account still does not exist, and sent; the first is
 * sent on its next step.
 */
import { address, generateKeyPairSigner, Signature } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { TOKEN_PROGRAM } from '../../../src/platform/chain-port/solana-chain';
import type { TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { SolanaKeel, custodyBalance, fundFromFaucet, settledTransfer, solanaCluster, startSolanaKeel } from './solana-keel';

jest.setTimeout(180_000);

const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
let k: SolanaKeel;
let org: TestOrg;
let cluster: Awaited<ReturnType<typeof solanaCluster>>;

beforeAll(async () => {
  k = await startSolanaKeel({ KEEL_FAILPOINTS: 'throw-solana-transfer:recorded' });
  org = await k.t.createOrg();
  cluster = await solanaCluster(org);
});

afterAll(async () => {
  await k?.t.stop();
  await k?.devnet.stop();
});

const fund = (to: string, amount: string, asset?: string) => fundFromFaucet(k.t, org, cluster.solanaId, to, amount, asset);
const custody = (walletId: string, assetId: string) => custodyBalance(k.t, walletId, assetId);
const lamports = (sol: string) => BigInt(Math.round(Number(sol) * 1e9));

test('two USDC withdrawals to the same new recipient, both prepared with its token account rent: the rent is charged once, the fees as paid, the ledger equals the chain', async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: cluster.solanaId, name: 'Solana payouts' })).body.data as { id: string; walletAddress: string };
  await fund(wallet.walletAddress, '1');
  await fund(wallet.walletAddress, '50', 'USDC');
  const solBefore = await k.chain.balance(wallet.walletAddress, { kind: 'native' }, 'final');
  expect(await custody(wallet.id, cluster.assets.SOL.id)).toBe(solBefore);

  const to = (await generateKeyPairSigner()).address;
  const [ata] = await findAssociatedTokenPda({ owner: address(to), mint: address(USDC.address), tokenProgram: TOKEN_PROGRAM });
  const send = (amount: string) => org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: cluster.assets.USDC.id, recipient: to, amount }] });
  // Asked together, so that both are usually prepared before either lands (the account not there yet).
  const [first, second] = await Promise.all([send('3'), send('4')]);
  expect([first.status, second.status]).toEqual([201, 201]);
  const [one, two] = [await settledTransfer(org, first.body.data.id), await settledTransfer(org, second.body.data.id)];
  expect([one.status, two.status]).toEqual(['CONFIRMED', 'CONFIRMED']);
  expect(await k.chain.balance(to, { kind: 'token', address: USDC.address, decimals: 6 }, 'final')).toBe(7_000_000n);

  // The first line prepared creates the token account (recorded with its rent); the second too, unless
  // the first had landed when it was prepared (a loaded machine). The account exists once either way.
  const rent = await k.chain.rpc.getMinimumBalanceForRentExemption(165n).send();
  const lines = await k.t.keel.platform.db('transfer_items').whereIn('transferId', [first.body.data.id, second.body.data.id]);
  expect(lines.map((l) => BigInt(l.accountCreationFee)).sort()).toEqual(expect.arrayContaining([rent]));
  expect((await k.chain.rpc.getAccountInfo(ata, { encoding: 'base64', commitment: 'finalized' }).send()).value!.lamports).toBe(rent);

  // What the sender lost on chain (no SOL was sent): each transaction's fee and the rent once; the lines were charged exactly that.
  const solAfter = await k.chain.balance(wallet.walletAddress, { kind: 'native' }, 'final');
  const fees = await Promise.all([one, two].map(async (d) => (await k.chain.rpc.getTransaction(d.items[0].txHash as Signature, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 }).send())!.meta!.fee));
  expect(solBefore - solAfter).toBe(fees[0] + fees[1] + rent);
  expect(lamports(one.items[0].gasFee) + lamports(two.items[0].gasFee)).toBe(solBefore - solAfter);
  // One line paid the rent, the other only its fee.
  expect([lamports(one.items[0].gasFee) - fees[0], lamports(two.items[0].gasFee) - fees[1]].sort()).toEqual([0n, rent]);

  // The custody ledger's SOL and USDC equal the chain's.
  await eventually(async () => (await custody(wallet.id, cluster.assets.SOL.id)) === solAfter, 10_000);
  expect(await custody(wallet.id, cluster.assets.USDC.id)).toBe(await k.chain.balance(wallet.walletAddress, { kind: 'token', address: USDC.address, decimals: 6 }, 'final'));
});
