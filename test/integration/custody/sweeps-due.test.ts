import { ethers } from 'ethers';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import { setBalance } from '../../support/chain-controls';

const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);

/**
 * A sweep that cannot be arranged when its deposit is confirmed, or whose transfer fails once
 * arranged, is not forgotten: it is due again, tried by the worker after a delay doubled for each
 * failure (SWEEP_RETRY_BASE_MS), until it is arranged and its transfer confirms. (A sweep held by AML goes once an admin releases the hold: aml/enforcement.test.ts.)
 */
const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, SWEEP_RETRY_BASE_MS: 200, SWEEP_RETRY_POLL_INTERVAL_MS: 100 }, { orgs: 1 });

describe('a sweep that could not be arranged', () => {
  let chainId: string;
  let usdc: { id: string; address: string };
  let provider: ethers.JsonRpcProvider;

  beforeAll(async () => {
    chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
    usdc = (await org.core.get(`/v1/assets?blockchainId=${chainId}&symbol=USDC`)).body.data[0];
    provider = t.keel.services.networks.get(chainId)!.provider;
  });

  const usdcOf = async (owner: string) => erc20.decodeFunctionResult('balanceOf', await provider.call({ to: usdc.address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint;
  const due = () => t.keel.platform.db('sweeps_due').select('addressId', 'purpose', 'attempts', 'lastError');

  async function faucet(address: string, amount: string, asset?: string) {
    const res = await org.core.post('/v1/dev/faucet', { blockchainId: chainId, address, amount, asset });
    expect(res.status).toBe(200);
    return res.body.data.txHash as string;
  }

  test('is due again while the master wallet has no gas to top the address up, and goes once it has', async () => {
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Treasury', configurations: { autoSweep: { enabled: true, threshold: '1' }, enableGaslessWithdraw: true } })).body.data;
    const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data;

    await faucet(address.address, '10', 'USDC');
    // Confirmed and credited, but the wallet holds no coin to pay the sweep's gas: no sweep, a sweep due.
    const [first] = await eventually(async () => {
      const rows = await due();
      return rows.length === 1 && rows[0].attempts >= 1 && rows;
    }, 30_000);
    expect(first).toMatchObject({ addressId: address.id, purpose: 'auto_sweep', lastError: expect.stringMatching(/insufficient|gas/i) });
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data).toEqual([]);

    // Tried again with a growing delay while nothing changes: the attempts grow, still no transfer.
    await eventually(async () => (await due())[0]?.attempts >= first.attempts + 2, 30_000);
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data).toEqual([]);

    // Once the wallet has gas (and no new deposit arrives), the sweep goes.
    await faucet(wallet.walletAddress, '1');
    const sweeps = await eventually(async () => {
      const list = (await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data;
      return list.length === 2 && list.every((x: { status: string }) => x.status === 'CONFIRMED') && list;
    }, 60_000);
    expect(sweeps.map((x: { kind: string }) => x.kind).sort()).toEqual(['gas_topup', 'sweep']);
    expect(sweeps.find((x: { kind: string }) => x.kind === 'sweep')).toMatchObject({ addressId: address.id, items: [{ amount: '10', recipient: wallet.walletAddress }] });
    expect(await usdcOf(address.address)).toBe(0n);
    expect(await usdcOf(wallet.walletAddress)).toBe(10_000_000n);
    expect(await due()).toEqual([]);
    const attempts = (await t.keel.platform.metrics.sweepAttempts.get()).values.filter((v) => v.labels.purpose === 'auto_sweep');
    expect(attempts.find((v) => v.labels.outcome === 'failed')?.value).toBeGreaterThanOrEqual(3);
    expect(attempts.find((v) => v.labels.outcome === 'arranged')?.value).toBeGreaterThanOrEqual(1);
  });

  test('goes from an address deactivated meanwhile: what reached it is the wallet\'s', async () => {
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Treasury', configurations: { autoSweep: { enabled: true, threshold: '1' }, enableGaslessWithdraw: true } })).body.data;
    const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data;
    await faucet(address.address, '4', 'USDC');
    await eventually(async () => (await due()).some((r) => r.addressId === address.id && r.attempts >= 1), 30_000);

    expect((await org.core.patch(`/v1/addresses/${address.id}`, { isActive: false })).status).toBe(200);
    await faucet(wallet.walletAddress, '1');
    await eventually(async () => {
      const list = (await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data;
      return list.some((x: { kind: string; status: string }) => x.kind === 'sweep' && x.status === 'CONFIRMED');
    }, 60_000);
    expect(await usdcOf(address.address)).toBe(0n);
    expect(await usdcOf(wallet.walletAddress)).toBe(4_000_000n);
    expect((await due()).filter((r) => r.addressId === address.id)).toEqual([]);
    // Its gas top-up was recorded to it though deactivated (watched while it was sending): the ledger holds what the chain does.
    const eth = (await org.core.get(`/v1/assets?blockchainId=${chainId}&symbol=ETH`)).body.data[0];
    await eventually(async () => (await t.keel.services.ledger.balance(t.keel.platform.db, address.id, eth.id, 'custody')).available === (await provider.getBalance(address.address)), 30_000);
  });

  test('is due again when its transfer fails once arranged (the gas top-up refused), and goes once the wallet has gas', async () => {
    const rpcUrl = t.keel.services.networks.get(chainId)!.spec.rpcUrl;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Treasury', configurations: { autoSweep: { enabled: true, threshold: '1' }, enableGaslessWithdraw: true } })).body.data;
    const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data;
    const ethTx = await faucet(wallet.walletAddress, '1');
    await eventually(async () => (await t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${chainId}:${ethTx}:%`).first()) !== undefined, 30_000);
    // The ledger still shows the coin, so the top-up is arranged; the node refuses to send it.
    await setBalance(rpcUrl, wallet.walletAddress, 0n);

    await faucet(address.address, '10', 'USDC');
    const transfers = async () => (await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data as { id: string; kind: string; status: string }[];
    // Each arranged sweep fails with its top-up; it is due again, its failures counted on across
    // the attempts (so the delay keeps doubling), and nothing has left the address.
    const [row] = await eventually(async () => {
      const rows = await due();
      return rows.length === 1 && rows[0].attempts >= 2 && rows;
    }, 30_000);
    expect(row).toMatchObject({ addressId: address.id, purpose: 'auto_sweep', lastError: expect.stringContaining("the sweep's transfer failed") });
    const failed = (await transfers()).filter((x) => x.status === 'FAILED');
    expect(new Set(failed.map((x) => x.kind))).toEqual(new Set(['gas_topup', 'sweep']));
    expect(await usdcOf(address.address)).toBe(10_000_000n);

    await setBalance(rpcUrl, wallet.walletAddress, 10n ** 18n);
    await eventually(async () => (await transfers()).some((x) => x.kind === 'sweep' && x.status === 'CONFIRMED'), 60_000);
    expect(await usdcOf(address.address)).toBe(0n);
    expect(await usdcOf(wallet.walletAddress)).toBe(10_000_000n);
    expect(await due()).toEqual([]);
    expect(await t.keel.platform.db('sweeps_arranged').where({ addressId: address.id })).toEqual([]);
  });
});
