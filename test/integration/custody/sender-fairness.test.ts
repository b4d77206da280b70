import { ethers } from 'ethers';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import { manualSender } from '../../support/manual-sender';

/**
 * A chain whose node does not answer holds back no other chain: the transaction sender takes the
 * oldest lines of each chain, and once a chain's node has not answered a gas estimate it is not
 * asked again until the next step. Keel's own sender waits ten minutes between steps here; the test
 * ticks one of its own.
 */
const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 600_000 }, { orgs: 1 });

test("twenty-one lines waiting on a chain whose node does not answer do not hold back another chain's line", async () => {
  const [a, b] = (await org.core.get('/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
  const wallet = async (blockchainId: string) => {
    const created = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Payouts' })).body.data;
    const { txHash } = (await org.core.post('/v1/dev/faucet', { blockchainId, address: created.walletAddress, amount: '1' })).body.data;
    await eventually(async () => (await t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${blockchainId}:${txHash}:%`).first()) !== undefined, 30_000);
    return created as { id: string };
  };
  const eth = async (blockchainId: string) => (await org.core.get(`/v1/assets?blockchainId=${blockchainId}&symbol=ETH`)).body.data[0].id as string;
  const withdraw = async (walletId: string, assetId: string) => {
    const res = await org.core.post(`/v1/master-wallets/${walletId}/transfer`, { assets: [{ assetId, recipient: ethers.Wallet.createRandom().address, amount: '0.001' }] });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const status = async (transferId: string) => (await org.core.get(`/v1/transfers/${transferId}`)).body.data.items[0].status as string;

  const [onA, onB] = [await wallet(a), await wallet(b)];
  const [ethA, ethB] = [await eth(a), await eth(b)];
  const waiting: string[] = [];
  for (let i = 0; i < 21; i++) waiting.push(await withdraw(onA.id, ethA));
  const other = await withdraw(onB.id, ethB);

  let asked = 0;
  const sender = manualSender(t.keel, { [a]: { estimateGas: async () => (asked++, Promise.reject(Object.assign(new Error('request timeout'), { code: 'TIMEOUT' }))) } });
  await sender.tick();
  expect(await status(other)).not.toBe('QUEUED');
  expect(asked).toBe(1);
  await sender.tick();
  expect(asked).toBe(2);
  for (const id of waiting) expect(await status(id)).toBe('QUEUED');
});
