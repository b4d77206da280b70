import { ethers } from 'ethers';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { Asset, assetsOf, balanceReader, createWallet, FAST, fund, randomAddress } from './support';

/**
 * A deposit address without gas gets it from its master wallet. While the master wallet's own
 * address holds a deposit from a sanctioned address that no admin has released, nothing leaves it
 * automatically, gas money included: the settlement rules and auto-sweeps of its addresses that
 * need a top-up are held (not failed), and go once the deposit is released.
 */
describe('a master wallet held by AML pays no gas top-up', () => {
  const { t, orgs: [org] } = useTestKeel({ ...FAST, SANCTIONS_REFRESH_INTERVAL_MS: 100, SWEEP_RETRY_BASE_MS: 200, SWEEP_RETRY_POLL_INTERVAL_MS: 100, SETTLEMENT_RULES_POLL_INTERVAL_MS: 100, SETTLEMENT_RULES_RETRY_BASE_MS: 200 }, { orgs: 1 });
  const sanctioned = ethers.Wallet.createRandom();
  let chain: string;
  let rpcUrl: string;
  let assets: Record<string, Asset>;
  let balanceOf: (symbol: string, owner: string) => Promise<bigint>;

  beforeAll(async () => {
    chain = (await org.core.get('/v1/blockchains')).body.data[0].id;
    assets = await assetsOf(org, chain);
    rpcUrl = t.keel.services.networks.get(chain)!.spec.rpcUrl;
    balanceOf = balanceReader(t.keel.services.networks.get(chain)!.provider, assets);
    await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: sanctioned.address, amount: '1' });
    const { sanctionsLists, shippedSanctions } = t.keel.services;
    await sanctionsLists.load({ source: 'test: a sender of flagged deposits', listDate: '2099-03-01', lists: [{ name: 'HELD', addresses: [sanctioned.address] }] }, { shipped: shippedSanctions, keepOthers: true });
    await eventually(async () => (await org.core.get('/v1/aml/lists')).body.data.listDate === '2099-03-01', 10_000);
  });

  /** A master wallet with coin for gas whose own address then receives a flagged deposit: the id of the flagged deposit. */
  const heldMasterWallet = async (configurations?: object) => {
    const wallet = await createWallet(org, chain, configurations);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const { txHash } = await fundFromFaucet(rpcUrl, sanctioned.privateKey, { to: wallet.walletAddress, amount: '0.1' });
    const flagged = await eventually(async () => (await org.core.get('/v1/aml/flagged-transfers?released=false')).body.data.find((r: any) => r.hash === txHash), 30_000);
    const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'customer' })).body.data as { id: string; address: string };
    return { wallet, address, flaggedId: flagged.id as string };
  };
  const gasTopUps = (masterWalletId: string) => t.keel.platform.db('transfers').where({ masterWalletId, addressId: null, kind: 'gas_topup' });
  const release = async (flaggedId: string) => expect((await org.core.post(`/v1/aml/flagged-transfers/${flaggedId}/release`, { note: 'reviewed' })).status).toBe(200);

  test("an address's settlement rule that needs gas waits, PENDING and never counted as an attempt, while its master wallet is held; released, the top-up and the sweep go", async () => {
    const { wallet, address, flaggedId } = await heldMasterWallet();
    const destination = randomAddress();
    const rule = (await org.core.post('/v1/settlement-rules', { addressId: address.id, name: 'USDC out', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: destination } })).body.data;
    const executions = async () => (await org.core.get(`/v1/settlement-rules/${rule.id}/executions`)).body.data as any[];
    await fund(t, org, chain, address.address, '20', 'USDC');

    const [looked] = await eventually(async () => {
      const list = await executions();
      return (list[0]?.error || (list[0] && list[0].status !== 'PENDING')) && list;
    }, 30_000);
    expect(looked).toMatchObject({ status: 'PENDING', attempts: 0, transferId: null, error: expect.stringMatching(/^held: the master wallet .* pays this address's gas/) });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await executions()).toEqual([expect.objectContaining({ status: 'PENDING', attempts: 0, transferId: null })]);
    expect(await gasTopUps(wallet.id)).toEqual([]);

    await release(flaggedId);
    const [done] = await eventually(async () => {
      const list = await executions();
      return list[0]?.status === 'EXECUTED' && list;
    }, 45_000);
    expect(done).toMatchObject({ kind: 'sweep', amount: '20', attempts: 1, error: null });
    expect(await gasTopUps(wallet.id)).toHaveLength(1);
    expect(await balanceOf('USDC', destination)).toBe(ethers.parseUnits('20', 6));
  });

  test('a withdrawal from an address under enableGaslessWithdraw that needs gas is refused 409 CONFLICT while its master wallet is held, nothing queued; released, it goes with its top-up', async () => {
    const { wallet, address, flaggedId } = await heldMasterWallet({ enableGaslessWithdraw: true });
    await fund(t, org, chain, address.address, '15', 'USDC');
    const withdraw = () => org.core.post(`/v1/addresses/${address.id}/transfer`, { assets: [{ assetId: assets.USDC.id, recipient: randomAddress(), amount: '5' }] });
    const refused = await withdraw();
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(refused.body.error.message).toMatch(/^held: the master wallet .* pays this address's gas/);
    expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id })).toEqual([]);

    await release(flaggedId);
    const sent = await withdraw();
    expect(sent.status).toBe(201);
    expect(await gasTopUps(wallet.id)).toHaveLength(1);
  });

  test("an address's token auto-sweep that needs gas is due, held, while its master wallet is held; released, the top-up and the sweep go", async () => {
    const { wallet, address, flaggedId } = await heldMasterWallet({ enableGaslessWithdraw: true, autoSweep: { enabled: true, threshold: '1' } });
    await fund(t, org, chain, address.address, '15', 'USDC');
    const due = async () => t.keel.platform.db('sweeps_due').where({ addressId: address.id }).select('purpose', 'attempts', 'lastError');
    await eventually(async () => (await due()).length > 0 || (await gasTopUps(wallet.id)).length > 0, 30_000);
    expect(await due()).toEqual([{ purpose: 'auto_sweep', attempts: 0, lastError: expect.stringMatching(/^held: the master wallet .* pays this address's gas/) }]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await due()).toEqual([expect.objectContaining({ attempts: 0, lastError: expect.stringMatching(/^held/) })]);
    expect(await gasTopUps(wallet.id)).toEqual([]);

    await release(flaggedId);
    await eventually(async () => (await balanceOf('USDC', wallet.walletAddress)) === ethers.parseUnits('15', 6), 45_000);
    expect(await gasTopUps(wallet.id)).toHaveLength(1);
    expect(await due()).toEqual([]);
  });
});
