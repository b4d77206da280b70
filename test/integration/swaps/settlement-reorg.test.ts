import { ethers } from 'ethers';
import { eventually } from '../../support/eventually';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { mine, revert, snapshot } from '../../support/chain-controls';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { randomAddress } from './support';

/**
 * A reorg that takes a deposit back before its settlement ran cancels the execution; the same
 * transfer confirmed again on the new fork makes it pending again, still one execution.
 */
describe('settlement rules and reorgs (a chain of their own)', () => {
  const CONFIRMATIONS = 2;
  let k: OwnChainKeel;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_341, CONFIRMATIONS, { SETTLEMENT_RULES_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100 });
  }, 60_000);
  afterAll(() => k?.stop());

  test('a reorged deposit cancels its pending execution, and the deposit confirmed again on the new fork makes it pending again, once', async () => {
    const { org, chain, blockchainId, assets, t } = k;
    const wallet = (await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Reorg' } })).body.data;
    const rule = (
      await org.core.request('POST', '/v1/settlement-rules', {
        body: { masterWalletId: wallet.id, name: 'later', delay: 3600, source: { blockchainId, assetIds: [assets.USDC.id] }, destination: { blockchainId, assetId: assets.USDC.id, address: randomAddress() } },
      })
    ).body.data;
    const executions = async () => (await org.core.request('GET', `/v1/settlement-rules/${rule.id}/executions`)).body.data;

    const before = await snapshot(chain.rpcUrl);
    // Signed now, so the same transaction can be mined again on the new fork.
    const faucet = await org.core.request('POST', '/v1/dev/faucet', { body: { address: wallet.walletAddress, asset: 'USDC', amount: '7' } });
    const deposit = await t.keel.services.networks.get(blockchainId)!.provider.getTransaction(faucet.body.data.txHash);
    await mine(chain.rpcUrl, CONFIRMATIONS);
    const [pending] = await eventually(async () => {
      const list = await executions();
      return list.length === 1 && list;
    });
    expect(pending).toMatchObject({ status: 'PENDING', amount: '7', depositTxHash: faucet.body.data.txHash, depositRevertedAt: null });

    await revert(chain.rpcUrl, before);
    // The new fork, longer than the old one, without the deposit (account #1 sends: the faucet's nonce stays free).
    await fundFromFaucet(chain.rpcUrl, devChainAccount(1).privateKey, { to: devChainAccount(7).address, amount: '1' });
    await mine(chain.rpcUrl, CONFIRMATIONS + 2);
    const [cancelled] = await eventually(async () => {
      const list = await executions();
      return list[0]?.status === 'CANCELLED' && list;
    });
    expect(cancelled.id).toBe(pending.id);
    expect(cancelled.error).toMatch(/reorg/);
    expect(cancelled.depositRevertedAt).not.toBeNull();

    // The same signed deposit is mined on the new fork: the one execution is pending again.
    await t.keel.services.networks.get(blockchainId)!.provider.broadcastTransaction(ethers.Transaction.from(deposit!).serialized);
    await mine(chain.rpcUrl, CONFIRMATIONS);
    const again = await eventually(async () => {
      const list = await executions();
      return list[0]?.status === 'PENDING' && list;
    });
    expect(again.map((e: { id: string }) => e.id)).toEqual([pending.id]);
    expect(again[0].depositRevertedAt).toBeNull();
  });
});
