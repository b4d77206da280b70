import { ethers } from 'ethers';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { mine, mineTo, revert, snapshot, withoutAutomine } from '../../support/chain-controls';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { ChainTransferModel } from '../../../src/modules/deposits/chain-transfer.model';
import { CustodyLedgerSync } from '../../../src/modules/ledger/custody-ledger-sync';
import { WalletDebts } from '../../../src/modules/ledger/wallet-debts';
import type { ChainService } from '../../../src/modules/chains';

const CONFIRMATIONS = 2;
const erc20 = new ethers.Interface(['function approve(address,uint256)', 'function transfer(address,uint256)', 'function transferFrom(address,address,uint256)', 'function balanceOf(address) view returns (uint256)']);
const usdc = (amount: string) => ethers.parseUnits(amount, 6);

/**
 * Money that leaves a watched address by a transaction Keel did not send (a spender's transferFrom
 * after an approval signed through Keel, a transaction signed without broadcast and sent by its
 * caller) leaves the custody ledger too, when the deposit watcher confirms it, and so does the gas
 * of every transaction the address sent that Keel did not; a reorg that drops it gives it back.
 * What Keel sends itself is debited once, when it is requested, and its gas once, when it is final.
 */
describe('outflows Keel did not send', () => {
  let k: OwnChainKeel;
  let provider: ethers.JsonRpcProvider;
  const spender = devChainAccount(6);

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_353, CONFIRMATIONS, { TRANSFER_POLL_INTERVAL_MS: 100 });
    provider = k.t.keel.services.networks.get(k.blockchainId)!.provider;
  }, 60_000);
  afterAll(() => k?.stop());

  const custody = async (walletId: string, asset: 'ETH' | 'USDC') => (await k.t.keel.services.ledger.balance(k.t.keel.platform.db, walletId, k.assets[asset].id, 'custody')).available;
  const usdcAt = async (owner: string) => erc20.decodeFunctionResult('balanceOf', await provider.call({ to: k.assets.USDC.address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint;
  const feeOf = async (txHash: string) => (await provider.getTransactionReceipt(txHash))!.fee;
  /** `keel reconcile`'s comparison of the wallet's ledger with the chain finds no difference. */
  const expectReconciled = async (walletId: string) => {
    const report = await k.t.keel.services.settlementReconciler.reconcile(k.t.keel.services.networks.get(k.blockchainId)!, { organizationId: k.org.orgId });
    expect(report.differences.filter((d) => d.walletId === walletId)).toEqual([]);
  };
  const outflowsOf = (txHash: string) => k.t.keel.platform.db('chain_transfers').where({ txHash, direction: 'outgoing', status: 'CONFIRMED' });

  /** A master wallet holding 1 ETH and 10 USDC, both credited. */
  async function fundedWallet(configurations?: object) {
    const res = await k.org.core.request('POST', '/v1/master-wallets', { body: { blockchainId: k.blockchainId, name: 'Custody', configurations } });
    expect(res.status).toBe(201);
    const w = res.body.data as { id: string; walletAddress: string };
    for (const [asset, amount] of [['ETH', '1'], ['USDC', '10']]) {
      const { txHash } = (await k.org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: k.blockchainId, address: w.walletAddress, asset, amount } })).body.data;
      await mine(k.chain.rpcUrl, CONFIRMATIONS - 1);
      await eventually(async () => (await k.t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${k.blockchainId}:${txHash}:%`).first()) !== undefined);
    }
    return w;
  }

  /** Signs a transaction through Keel's signing API without broadcast, sends it as its caller would, and mines it to its confirmations. */
  async function signAndSend(walletId: string, fields: object): Promise<string> {
    const res = await k.org.core.request('POST', `/v1/master-wallets/${walletId}/sign/transaction`, { body: { blockchainId: k.blockchainId, gasLimit: '100000', ...fields } });
    expect(res.status).toBe(201);
    const sent = await provider.broadcastTransaction(res.body.data.signature);
    expect((await sent.wait())!.status).toBe(1);
    await mine(k.chain.rpcUrl, CONFIRMATIONS - 1);
    return sent.hash;
  }

  /** The spender pulls `amount` from `owner` with transferFrom and mines it to its confirmations. */
  async function pull(owner: string, amount: bigint): Promise<string> {
    const wallet = new ethers.Wallet(spender.privateKey, provider);
    const sent = await wallet.sendTransaction({ to: k.assets.USDC.address, data: erc20.encodeFunctionData('transferFrom', [owner, spender.address, amount]) });
    await sent.wait();
    await mine(k.chain.rpcUrl, CONFIRMATIONS - 1);
    return sent.hash;
  }

  test("a spender's transferFrom after an approval signed through Keel lowers the custody ledger by what it pulled; a reorg that drops the pull gives it back", async () => {
    const w = await fundedWallet();
    const approval = await signAndSend(w.id, { to: k.assets.USDC.address, data: erc20.encodeFunctionData('approve', [spender.address, usdc('5')]) });
    await mine(k.chain.rpcUrl, 2);
    await eventually(async () => Number((await k.t.keel.platform.db('chain_cursors').where({ blockchainId: k.blockchainId }).first()).blockNumber) >= (await provider.getTransactionReceipt(approval))!.blockNumber);
    expect(await custody(w.id, 'USDC')).toBe(usdc('10')); // an approval moves nothing

    const beforePull = await snapshot(k.chain.rpcUrl);
    const pulled = await pull(w.walletAddress, usdc('3'));
    await eventually(async () => (await custody(w.id, 'USDC')) === usdc('7'));
    expect(await usdcAt(w.walletAddress)).toBe(usdc('7'));
    const head = await provider.getBlockNumber();

    // The pull's block is dropped: the new fork grows past the old head, one block a call.
    await revert(k.chain.rpcUrl, beforePull);
    await mineTo(k.chain.rpcUrl, head + 2);
    await eventually(async () => (await custody(w.id, 'USDC')) === usdc('10'), 30_000);
    expect(await outflowsOf(pulled)).toHaveLength(0);
    expect(await usdcAt(w.walletAddress)).toBe(usdc('10'));

    // Pulled again on the new fork: taken once more, and once.
    await pull(w.walletAddress, usdc('3'));
    await eventually(async () => (await custody(w.id, 'USDC')) === usdc('7'));
    await mine(k.chain.rpcUrl, 3);
    await new Promise((r) => setTimeout(r, 500));
    expect(await custody(w.id, 'USDC')).toBe(usdc('7'));
  });

  test("booking a scan's outflows reads the chain's assets only for a coin riding with a deposit to trading: a spender's pull reads none, and is not taken twice", async () => {
    const w = await fundedWallet();
    await signAndSend(w.id, { to: k.assets.USDC.address, data: erc20.encodeFunctionData('approve', [spender.address, usdc('5')]) });
    const pulled = await pull(w.walletAddress, usdc('2'));
    await eventually(async () => (await custody(w.id, 'USDC')) === usdc('8'));

    const { services, platform } = k.t.keel;
    let assetReads = 0;
    const chains: ChainService = Object.create(services.chains, { assetsOf: { value: (...args: Parameters<ChainService['assetsOf']>) => (assetReads++, services.chains.assetsOf(...args)) } });
    const sync = new CustodyLedgerSync(services.ledger, chains, new WalletDebts(services.ledger, platform.outbox, platform.metrics), platform.logger);
    const outflows = await ChainTransferModel.query(platform.db).where({ txHash: pulled, direction: 'outgoing', status: 'CONFIRMED' });
    expect(outflows).toHaveLength(1);
    await platform.db.transaction((trx) => sync.outflowsConfirmed(trx, outflows));
    expect(assetReads).toBe(0);
    expect(await custody(w.id, 'USDC')).toBe(usdc('8'));
  });

  test('the value of a transaction signed without broadcast and sent by its caller, and its gas, leave the custody ledger once mined: the ledger agrees with the chain', async () => {
    const w = await fundedWallet();
    const sent = await signAndSend(w.id, { to: ethers.Wallet.createRandom().address, value: ethers.parseEther('0.25').toString() });
    const gas = await feeOf(sent);
    await eventually(async () => (await custody(w.id, 'ETH')) === ethers.parseEther('0.75') - gas);
    expect(await provider.getBalance(w.walletAddress)).toBe(ethers.parseEther('0.75') - gas);
    await expectReconciled(w.id);
  });

  test('the gas of every transaction the key sends from the address outside Keel leaves the custody ledger once, value or not, reverted or not; a reorg that drops one gives its gas back, and the fork that mines it again takes it once', async () => {
    const w = await fundedWallet();
    const key = await k.t.keel.services.sendingWallets.signer(k.org.orgId, w.id, null, provider);
    const send = async (tx: ethers.TransactionRequest) => {
      const sent = await key.sendTransaction(tx);
      await provider.waitForTransaction(sent.hash);
      return sent.hash;
    };
    const paidUsdc = await send({ to: k.assets.USDC.address, data: erc20.encodeFunctionData('transfer', [ethers.Wallet.createRandom().address, usdc('2')]) });
    const approval = await send({ to: k.assets.USDC.address, data: erc20.encodeFunctionData('approve', [spender.address, usdc('1')]) });
    // The token contract takes no coin: mined with status 0, it moved nothing and paid its gas.
    const beforeRevert = await snapshot(k.chain.rpcUrl);
    const reverted = await key.signTransaction(await key.populateTransaction({ to: k.assets.USDC.address, value: ethers.parseEther('0.1'), gasLimit: 60_000n }));
    // (Mined on demand: a node mining each transaction as it comes answers the broadcast of one that reverts with its error.)
    const sendReverted = () => withoutAutomine(k.chain.rpcUrl, async () => (await provider.broadcastTransaction(reverted), await mine(k.chain.rpcUrl, CONFIRMATIONS)));
    await sendReverted();
    const revertedHash = ethers.Transaction.from(reverted).hash!;
    expect((await provider.getTransactionReceipt(revertedHash))!.status).toBe(0);

    const revertedGas = await feeOf(revertedHash);
    const gas = (await feeOf(paidUsdc)) + (await feeOf(approval)) + revertedGas;
    await eventually(async () => (await custody(w.id, 'ETH')) === ethers.parseEther('1') - gas);
    expect(await custody(w.id, 'USDC')).toBe(usdc('8'));
    expect(await provider.getBalance(w.walletAddress)).toBe(ethers.parseEther('1') - gas);
    await expectReconciled(w.id);

    // Told again (a scan retried after a crash): nothing more is taken.
    const { services, platform } = k.t.keel;
    const fees = await platform.db('chain_fees').whereIn('txHash', [paidUsdc, approval, revertedHash]);
    expect(fees).toHaveLength(3);
    await platform.db.transaction((trx) => services.custodyLedgerSync.feesConfirmed(trx, fees));
    expect(await custody(w.id, 'ETH')).toBe(ethers.parseEther('1') - gas);

    // The reverted transaction's block is dropped: its gas comes back. Mined again on the new fork, it is taken once more, and once.
    const head = await provider.getBlockNumber();
    await revert(k.chain.rpcUrl, beforeRevert);
    await mineTo(k.chain.rpcUrl, head + 2);
    const withoutReverted = ethers.parseEther('1') - gas + revertedGas;
    await eventually(async () => (await custody(w.id, 'ETH')) === withoutReverted, 30_000);
    await expectReconciled(w.id);
    await sendReverted();
    const again = await feeOf(revertedHash);
    await eventually(async () => (await custody(w.id, 'ETH')) === withoutReverted - again);
    await mine(k.chain.rpcUrl, 3);
    await new Promise((r) => setTimeout(r, 500));
    expect(await custody(w.id, 'ETH')).toBe(withoutReverted - again);
    await expectReconciled(w.id);
  });

  test("gas paid beyond what the custody ledger holds available becomes the wallet's debt in the native coin, once, and the ledger reconciles with the chain; a reorg that drops the transaction gives the whole fee back, repaying the debt", async () => {
    const w = await fundedWallet({ security: { requireApprovalForTransfers: true } });
    const { services, platform } = k.t.keel;
    const debtOf = async () => BigInt((await platform.db('wallet_debts').where({ walletId: w.id, assetId: k.assets.ETH.id, account: 'custody' }).first())?.amount ?? 0);
    // A withdrawal held for approval takes all but 1000 wei of the ether from what the ledger holds available; the chain still holds it.
    const held = await k.org.core.request('POST', `/v1/master-wallets/${w.id}/transfer`, { body: { assets: [{ assetId: k.assets.ETH.id, recipient: ethers.Wallet.createRandom().address, amount: '0.999999999999999' }] } });
    expect([held.status, held.body.data.status]).toEqual([201, 'PENDING_APPROVAL']);
    expect(await custody(w.id, 'ETH')).toBe(1000n);

    // The key pays gas outside Keel: more than the 1000 wei available.
    const beforeSend = await snapshot(k.chain.rpcUrl);
    const key = await services.sendingWallets.signer(k.org.orgId, w.id, null, provider);
    const sent = await key.sendTransaction({ to: k.assets.USDC.address, data: erc20.encodeFunctionData('transfer', [ethers.Wallet.createRandom().address, usdc('1')]) });
    await provider.waitForTransaction(sent.hash);
    await mine(k.chain.rpcUrl, CONFIRMATIONS - 1);
    const gas = await feeOf(sent.hash);
    expect(gas).toBeGreaterThan(1000n);
    await eventually(async () => (await debtOf()) > 0n);
    expect(await debtOf()).toBe(gas - 1000n);
    expect(await custody(w.id, 'ETH')).toBe(0n);
    const reference = `gas:${k.blockchainId}:${sent.hash}`;
    const recorded = async () => (await platform.db('outbox_events').where({ type: 'wallet.debt_recorded' })).map((e) => e.envelope.data).filter((d) => d.walletId === w.id);
    expect(await recorded()).toEqual([expect.objectContaining({ assetId: k.assets.ETH.id, account: 'custody', amount: (gas - 1000n).toString(), outstanding: (gas - 1000n).toString(), reference })]);
    await expectReconciled(w.id);

    // Told again (a scan retried after a crash): no second debt.
    const fees = await platform.db('chain_fees').where({ txHash: sent.hash });
    await platform.db.transaction((trx) => services.custodyLedgerSync.feesConfirmed(trx, fees));
    expect(await debtOf()).toBe(gas - 1000n);
    expect(await recorded()).toHaveLength(1);

    // The transaction's block is dropped: the whole fee comes back, the debt repaid first and the 1000 wei available again.
    const head = await provider.getBlockNumber();
    await revert(k.chain.rpcUrl, beforeSend);
    await mineTo(k.chain.rpcUrl, head + 2);
    await eventually(async () => (await custody(w.id, 'ETH')) === 1000n && (await debtOf()) === 0n, 30_000);
    expect(await provider.getBalance(w.walletAddress)).toBe(ethers.parseEther('1'));
    await expectReconciled(w.id);
  });

  test('a reorg gives back exactly the gas charged under the reference: not the fee another mining of the transaction paid, and for a charge from before gas_charges only what its debit took', async () => {
    const w = await fundedWallet();
    const { services, platform } = k.t.keel;
    const sync = services.custodyLedgerSync;
    const txHash = ethers.hexlify(ethers.randomBytes(32));
    const row = (fee: bigint) => ({ id: ethers.hexlify(ethers.randomBytes(16)), organizationId: k.org.orgId, blockchainId: k.blockchainId, masterWalletId: w.id, addressId: null, txHash, fromAddress: w.walletAddress, blockNumber: '1', blockHash: '0x', fee: fee.toString(), status: 'REVERTED' as const });
    const before = await custody(w.id, 'ETH');

    // keel settlement exit charged its transaction's gas when it was mined (7000 wei); the fork that mined it again says 9000.
    await platform.db.transaction((trx) => sync.chargeTransactionGas(trx, { organizationId: k.org.orgId, walletId: w.id, blockchainId: k.blockchainId, txHash, fee: 7000n }));
    expect(await custody(w.id, 'ETH')).toBe(before - 7000n);
    await platform.db.transaction((trx) => sync.feesReverted(trx, [row(9000n)]));
    expect(await custody(w.id, 'ETH')).toBe(before);
    await platform.db.transaction((trx) => sync.feesReverted(trx, [row(9000n)]));
    expect(await custody(w.id, 'ETH')).toBe(before);

    // A charge made before gas_charges (its debit only: what the wallet held then) gives back what the debit took.
    const legacy = `gas:legacy:${txHash}`;
    await platform.db.transaction((trx) => sync.chargeGasTo(trx, { organizationId: k.org.orgId, walletId: w.id, blockchainId: k.blockchainId, fee: 5000n, reference: legacy }));
    await platform.db('gas_charges').where({ reference: legacy }).delete();
    await platform.db.transaction((trx) => sync.refundGas(trx, legacy));
    expect(await custody(w.id, 'ETH')).toBe(before);
  });

  test('a withdrawal Keel sends is debited once, when requested, not again when the watcher sees it leave', async () => {
    const w = await fundedWallet();
    const res = await k.org.core.request('POST', `/v1/master-wallets/${w.id}/transfer`, { body: { assets: [{ assetId: k.assets.USDC.id, recipient: ethers.Wallet.createRandom().address, amount: '4' }] } });
    expect(res.status).toBe(201);
    expect(await custody(w.id, 'USDC')).toBe(usdc('6'));
    const line = await eventually(async () => {
      const item = (await k.org.core.request('GET', `/v1/transfers/${res.body.data.id}`)).body.data.items[0];
      if (item.status !== 'CONFIRMED') await mine(k.chain.rpcUrl, 1);
      return item.status === 'CONFIRMED' && item;
    }, 30_000, 200);
    await eventually(async () => (await outflowsOf(line.txHash)).length === 1);
    await mine(k.chain.rpcUrl, 2);
    await new Promise((r) => setTimeout(r, 500));
    expect(await custody(w.id, 'USDC')).toBe(usdc('6'));
    expect(await usdcAt(w.walletAddress)).toBe(usdc('6'));
    // Its gas too: charged with the line, not again when the watcher sees the fee paid.
    expect(await custody(w.id, 'ETH')).toBe(ethers.parseEther('1') - (await feeOf(line.txHash)));
    await expectReconciled(w.id);
  });
});
