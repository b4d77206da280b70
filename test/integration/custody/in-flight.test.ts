import { ethers } from 'ethers';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { mine, revert, setAutomine, snapshot } from '../../support/chain-controls';
import { manualSender } from '../../support/manual-sender';
import { inFlightByAsset } from '../../../src/modules/withdrawals/in-flight';
import type { TransactionSender } from '../../../src/modules/withdrawals/transaction-sender';

const CONFIRMATIONS = 2;
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);

interface Line {
  id: string;
  status: string;
  amount: string;
  blockNumber: string | null;
}

/**
 * What is still leaving an address counts once: a line whose transaction is mined but not yet
 * confirmed has left the address's balance, so the checks of later sends (withdrawals, sweeps) stop
 * counting it as on its way out; a reorg that drops it counts it again. The sender is ticked by the
 * test on a chain that mines only when a transaction arrives or the test mines.
 */
describe('a line seen mined and waiting for its confirmations', () => {
  let k: OwnChainKeel;
  let sender: TransactionSender;
  let provider: ethers.JsonRpcProvider;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_352, CONFIRMATIONS, { TRANSFER_POLL_INTERVAL_MS: 600_000 });
    provider = k.t.keel.services.networks.get(k.blockchainId)!.provider;
    sender = manualSender(k.t.keel);
  }, 60_000);
  afterAll(() => k?.stop());
  afterEach(() => setAutomine(k.chain.rpcUrl, true));

  const usdcOf = async (owner: string) => erc20.decodeFunctionResult('balanceOf', await provider.call({ to: k.assets.USDC.address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint;
  const usdcLeaving = async (address: string) => (await inFlightByAsset(k.t.keel.platform.db, address, k.blockchainId, [k.assets.USDC.id])).get(k.assets.USDC.id) ?? 0n;
  const lineOf = async (transferId: string): Promise<Line> => (await k.org.core.request('GET', `/v1/transfers/${transferId}`)).body.data.items[0];
  const recipient = () => ethers.Wallet.createRandom().address;

  async function wallet(configurations?: object) {
    const res = await k.org.core.request('POST', '/v1/master-wallets', { body: { blockchainId: k.blockchainId, name: 'Payouts', configurations } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; walletAddress: string };
  }

  /** Sends from the faucet and mines until the deposit is confirmed and credited. */
  async function deposit(address: string, asset: 'ETH' | 'USDC', amount: string) {
    const { txHash } = (await k.org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: k.blockchainId, address, asset, amount } })).body.data;
    await mine(k.chain.rpcUrl, CONFIRMATIONS - 1);
    await eventually(async () => (await k.t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${k.blockchainId}:${txHash}:%`).first()) !== undefined);
  }

  /** A wallet holding 1 ETH for gas and 100 USDC, both credited. */
  async function fundedPayouts() {
    const payouts = await wallet();
    await deposit(payouts.walletAddress, 'ETH', '1');
    await deposit(payouts.walletAddress, 'USDC', '100');
    return payouts;
  }

  const withdraw = (walletId: string, amount: string) =>
    k.org.core.request('POST', `/v1/master-wallets/${walletId}/transfer`, { body: { assets: [{ assetId: k.assets.USDC.id, recipient: recipient(), amount }] } });

  /** Ticks the sender, mining a block after each round, until `done` holds. */
  async function tickUntil<T>(done: () => Promise<T | false>, rounds = 40): Promise<T> {
    for (let i = 0; i < rounds; i++) {
      await sender.tick();
      const value = await done();
      if (value) return value;
      await mine(k.chain.rpcUrl, 1);
    }
    throw new Error(`not done after ${rounds} rounds`);
  }

  test('counts once: the rest of the balance can be withdrawn, and the line shows its block', async () => {
    const payouts = await fundedPayouts();
    const first = await withdraw(payouts.id, '60');
    expect(first.status).toBe(201);

    await sender.tick(); // signed and broadcast: the chain mines it at once, one block short of final
    await sender.tick(); // followed: seen mined
    expect(await usdcOf(payouts.walletAddress)).toBe(40_000_000n);

    // The address holds 40 and nothing else is leaving it: 40 may go (the 60 was counted twice before).
    const rest = await withdraw(payouts.id, '40');
    expect(rest.status).toBe(201);
    const line = await lineOf(first.body.data.id);
    expect(line).toMatchObject({ status: 'SUBMITTED', blockNumber: String(await provider.getBlockNumber()) });
    const lines = await tickUntil(async () => {
      const both = await Promise.all([first, rest].map((r) => lineOf(r.body.data.id)));
      return both.every((l) => l.status === 'CONFIRMED') && both;
    });
    expect(lines[0].blockNumber).toBe(line.blockNumber);
    expect(await usdcOf(payouts.walletAddress)).toBe(0n);
  });

  test('a reorg that drops the block counts the line as leaving again, until it is mined anew', async () => {
    const payouts = await fundedPayouts();
    const sent = await withdraw(payouts.id, '60');
    expect(sent.status).toBe(201);

    await setAutomine(k.chain.rpcUrl, false);
    await sender.tick(); // signed and broadcast: waiting in the mempool
    expect(await usdcLeaving(payouts.walletAddress)).toBe(60_000_000n);
    const beforeBlock = await snapshot(k.chain.rpcUrl);
    await mine(k.chain.rpcUrl, 1);
    await sender.tick();
    expect((await lineOf(sent.body.data.id)).blockNumber).not.toBeNull();
    expect(await usdcLeaving(payouts.walletAddress)).toBe(0n);

    await revert(k.chain.rpcUrl, beforeBlock);
    await sender.tick();
    expect(await lineOf(sent.body.data.id)).toMatchObject({ status: 'SUBMITTED', blockNumber: null });
    expect(await usdcLeaving(payouts.walletAddress)).toBe(60_000_000n);

    await setAutomine(k.chain.rpcUrl, true);
    const line = await tickUntil(async () => {
      const l = await lineOf(sent.body.data.id);
      return l.status === 'CONFIRMED' && l;
    });
    expect(line.blockNumber).not.toBeNull();
    expect(await usdcOf(payouts.walletAddress)).toBe(40_000_000n);
  });

  test('a deposit confirmed while the sweep before it waits for its confirmations is swept in full', async () => {
    const treasury = await wallet({ autoSweep: { enabled: true, threshold: '1' }, enableGaslessWithdraw: true });
    await deposit(treasury.walletAddress, 'ETH', '1');
    const address = (await k.org.core.request('POST', `/v1/master-wallets/${treasury.id}/addresses`, { body: {} })).body.data as { id: string; address: string };
    const sweeps = async () => ((await k.org.core.request('GET', `/v1/transfers?masterWalletId=${treasury.id}`)).body.data as { kind: string; status: string; items: Line[] }[]).filter((x) => x.kind === 'sweep');

    await deposit(address.address, 'USDC', '10');
    // The gas top-up goes first and must be final before the sweep is sent.
    for (let round = 0; ; round++) {
      if (round === 40) throw new Error('the sweep was never sent');
      await sender.tick();
      const [sweep] = await sweeps();
      if (sweep?.items[0].status === 'SUBMITTED') break;
      await mine(k.chain.rpcUrl, 1);
    }
    await sender.tick(); // seen mined, one block short of final

    await deposit(address.address, 'USDC', '5');
    const second = await eventually(async () => {
      const all = await sweeps();
      return all.length === 2 && all.find((s) => s.items[0].amount === '5');
    });
    expect(second.items[0].status).toBe('QUEUED');
    // The first is still waiting, as far as Keel knows (the sender has not looked since).
    expect((await sweeps()).find((s) => s.items[0].amount === '10')!.items[0]).toMatchObject({ status: 'SUBMITTED', blockNumber: expect.any(String) });
    await tickUntil(async () => (await sweeps()).every((s) => s.status === 'CONFIRMED'));
    expect(await usdcOf(address.address)).toBe(0n);
    expect(await usdcOf(treasury.walletAddress)).toBe(15_000_000n);
  });
});
