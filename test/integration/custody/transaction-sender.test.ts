import { ethers } from 'ethers';
import type { TestKeel, TestOrg } from '../../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { mine, setAutomine } from '../../support/chain-controls';
import { TransactionSender, type TransactionSenderOptions } from '../../../src/modules/withdrawals/transaction-sender';
import { createDb } from '../../../src/platform/db/knex';
import { manualSender, type NodeAnswers } from '../../support/manual-sender';
import { createLogger } from '../../../src/platform/logger';
import { INTERNAL_REASON } from '../../../src/platform/shown-reason';
import { moveLine } from '../../../src/modules/withdrawals/sending-item';

const CONFIRMATIONS = 2;
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);
type Broadcast = NonNullable<NodeAnswers['broadcastTransaction']>;

/**
 * A withdrawal is paid at most once: the senders here are driven tick by tick (Keel's own sender
 * waits ten minutes between ticks), on a chain that mines only when a transaction arrives or the
 * test mines, so the test decides what each sender sees.
 */
describe('the transaction sender pays each line at most once', () => {
  let k: OwnChainKeel;
  let t: TestKeel;
  let org: TestOrg;
  let chainId: string;
  let assets: OwnChainKeel['assets'];
  let provider: ethers.JsonRpcProvider;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_350, CONFIRMATIONS, { TRANSFER_POLL_INTERVAL_MS: 600_000 });
    ({ t, org, assets, blockchainId: chainId } = k);
    provider = t.keel.services.networks.get(chainId)!.provider;
  }, 60_000);
  afterAll(() => k?.stop());
  afterEach(() => setAutomine(k.chain.rpcUrl, true));

  /** A sender as another worker would run it; `answers` stand in for the node's. */
  const sender = (answers: NodeAnswers = {}, options: Partial<TransactionSenderOptions> = {}): TransactionSender => manualSender(t.keel, answers, options);

  /** The node takes the transaction, then answers with `error` (as a load balancer in front of two nodes may). */
  const acceptsThenAnswers =
    (error: { code: string; message: string }): Broadcast =>
    async (p, raw) => {
      await p.broadcastTransaction(raw);
      throw Object.assign(new Error(error.message), { code: error.code });
    };

  async function fundedWallet(eth: string, usdc?: string) {
    const wallet = (await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId: chainId, name: 'Payouts' } })).body.data as { id: string; walletAddress: string };
    for (const [asset, amount] of [['ETH', eth], ['USDC', usdc]] as const) {
      if (!amount) continue;
      const { txHash } = (await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: chainId, address: wallet.walletAddress, asset, amount } })).body.data;
      await mine(k.chain.rpcUrl, CONFIRMATIONS);
      await eventually(async () => (await t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${chainId}:${txHash}:%`).first()) !== undefined);
    }
    return wallet;
  }

  const transfer = async (walletId: string, lines: { asset: string; recipient: string; amount: string }[]) => {
    const res = await org.core.request('POST', `/v1/master-wallets/${walletId}/transfer`, { body: { assets: lines.map((l) => ({ assetId: assets[l.asset].id, recipient: l.recipient, amount: l.amount })) } });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  /** A node behind the one that counts the sender's transactions: it shows neither `hash` nor its receipt (the block it was mined in not yet reached). */
  const lagsBehind = (hash: () => string | undefined): NodeAnswers => ({
    getTransactionReceipt: async (p, h) => (h === hash() ? null : p.getTransactionReceipt(h)),
    getTransaction: async (p, h) => (h === hash() ? null : p.getTransaction(h)),
  });
  const lineOf = async (transferId: string) => (await org.core.request('GET', `/v1/transfers/${transferId}`)).body.data.items[0];
  const usdcOf = async (owner: string) => erc20.decodeFunctionResult('balanceOf', await provider.call({ to: assets.USDC.address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint;
  const ledgerEntries = (itemId: string) => t.keel.platform.db('ledger_entries').where('reference', 'like', `%:${itemId}`).orderBy('id').pluck('reference');

  /** Ticks the senders together, mining a block after each round, until `done` holds. */
  async function tickUntil<T>(senders: TransactionSender[], done: () => Promise<T | false>, rounds = 40): Promise<T> {
    for (let i = 0; i < rounds; i++) {
      await Promise.all(senders.map((s) => s.tick()));
      const value = await done();
      if (value) return value;
      await mine(k.chain.rpcUrl, 1);
    }
    throw new Error(`not done after ${rounds} rounds`);
  }

  test('with no line open, a tick asks PostgreSQL one question and nothing else', async () => {
    expect(await t.keel.platform.db('transfer_items').whereIn('status', ['QUEUED', 'SIGNED', 'SUBMITTED']).first()).toBeUndefined();
    const db = createDb(t.config.DATABASE_URL, 1);
    try {
      const { services, platform } = t.keel;
      const idle = new TransactionSender(db, platform.outbox, services.networks, services.chains, services.sendingWallets, { pollIntervalMs: 50, bumpAfterMs: 600_000, bumpPercent: 25 }, platform.logger);
      const statements: string[] = [];
      db.on('query', (q: { sql: string }) => statements.push(q.sql));
      await idle.tick();
      expect(statements).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  });

  test('two senders ticking together on the same queued withdrawals send each line exactly once', async () => {
    const wallet = await fundedWallet('1', '100');
    const recipients = Array.from({ length: 8 }, () => ethers.Wallet.createRandom().address);
    const transfers: string[] = [];
    for (const r of recipients) transfers.push(await transfer(wallet.id, [{ asset: 'USDC', recipient: r, amount: '2.5' }]));

    const [a, b] = [sender(), sender()];
    const lines = await tickUntil([a, b], async () => {
      const all = await Promise.all(transfers.map(lineOf));
      return all.every((l) => l.status === 'CONFIRMED') && all;
    });

    for (const r of recipients) expect(await usdcOf(r)).toBe(2_500_000n);
    expect(await provider.getTransactionCount(wallet.walletAddress)).toBe(recipients.length); // one transaction per line
    expect(new Set(lines.map((l: { txHash: string }) => l.txHash)).size).toBe(recipients.length);
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.USDC.id, 'custody')).available).toBe(80_000_000n);
    const executed = (await t.keel.platform.db('outbox_events').where({ type: 'master.transfer_executed' })).filter((e) => transfers.includes(e.envelope.data.transferId));
    expect(executed).toHaveLength(recipients.length);
  });

  test('a nonce a transaction Keel did not send takes for good is signed again with a fresh nonce and paid once', async () => {
    const wallet = await fundedWallet('1');
    const payee = ethers.Wallet.createRandom().address;
    await setAutomine(k.chain.rpcUrl, false);
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: payee, amount: '0.1' }]);
    const s = sender();
    await s.tick();
    const first = await lineOf(id);
    expect(first.status).toBe('SUBMITTED');

    // The node forgets Keel's transaction, and the same key spends the nonce outside Keel.
    await rpc(k.chain.rpcUrl, 'hardhat_dropTransaction', [first.txHash]);
    const key = await t.keel.services.sendingWallets.signer(org.orgId, wallet.id, null, provider);
    await provider.broadcastTransaction(await key.signTransaction({ type: 2, chainId: 31_350, nonce: Number(first.nonce), to: devChainAccount(1).address, value: 1n, gasLimit: 21_000n, maxFeePerGas: ethers.parseUnits('50', 'gwei'), maxPriorityFeePerGas: 1n }));
    await mine(k.chain.rpcUrl, 1);
    await s.tick();
    expect(await lineOf(id)).toMatchObject({ status: 'SUBMITTED', nonce: first.nonce }); // not yet final: Keel keeps following its hash

    await mine(k.chain.rpcUrl, 1);
    const done = await tickUntil([s], async () => {
      const l = await lineOf(id);
      return l.status === 'CONFIRMED' && l;
    });
    expect(done.nonce).toBe(String(Number(first.nonce) + 1));
    expect(done.replacedTxHashes).toContain(first.txHash);
    expect(await provider.getBalance(payee)).toBe(ethers.parseEther('0.1'));
    expect(await provider.getTransactionCount(wallet.walletAddress)).toBe(2); // the outside one and Keel's one
    expect(await ledgerEntries(done.id)).toEqual([`transfer:${done.id}`, `gas:${done.id}`]);
  });

  test('a line whose nonce the count says is used while no receipt of its own is found (a node behind) is never signed again: paid once', async () => {
    const wallet = await fundedWallet('1');
    const payee = ethers.Wallet.createRandom().address;
    let sent: string | undefined;
    const behind = sender(lagsBehind(() => sent));
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: payee, amount: '0.1' }]);
    await behind.tick(); // signed, broadcast and mined at once
    const line = await lineOf(id);
    expect(line).toMatchObject({ status: 'SUBMITTED', nonce: '0' });
    sent = line.txHash;

    // Final by the count, its receipt not shown: the sender finds the nonce's transaction in its block, its own, and waits.
    for (let i = 0; i < 3; i++) {
      await mine(k.chain.rpcUrl, CONFIRMATIONS);
      await behind.tick();
    }
    expect(await lineOf(id)).toMatchObject({ status: 'SUBMITTED', nonce: '0', txHash: sent, replacedTxHashes: [] });
    expect(await provider.getTransactionCount(wallet.walletAddress)).toBe(1);

    // The node catches up: the line is confirmed on its one transaction.
    await tickUntil([sender()], async () => (await lineOf(id)).status === 'CONFIRMED');
    expect(await lineOf(id)).toMatchObject({ txHash: sent, replacedTxHashes: [] });
    expect(await provider.getBalance(payee)).toBe(ethers.parseEther('0.1'));
    expect(await provider.getTransactionCount(wallet.walletAddress)).toBe(1);
  });

  test('"replacement underpriced" or "nonce too low" for Keel\'s own transaction, pending or mined, does not sign it again', async () => {
    const wallet = await fundedWallet('1');
    const [pendingPayee, minedPayee] = [ethers.Wallet.createRandom().address, ethers.Wallet.createRandom().address];
    const underpriced = sender({ broadcastTransaction: acceptsThenAnswers({ code: 'REPLACEMENT_UNDERPRICED', message: 'replacement transaction underpriced' }) });
    const tooLow = sender({ broadcastTransaction: acceptsThenAnswers({ code: 'NONCE_EXPIRED', message: 'nonce too low' }) });

    await setAutomine(k.chain.rpcUrl, false);
    const pending = await transfer(wallet.id, [{ asset: 'ETH', recipient: pendingPayee, amount: '0.1' }]);
    for (let i = 0; i < 3; i++) await underpriced.tick();
    expect(await lineOf(pending)).toMatchObject({ error: null, status: 'SUBMITTED', nonce: '0', replacedTxHashes: [] });
    expect(await provider.getTransactionCount(wallet.walletAddress, 'pending')).toBe(1);

    await setAutomine(k.chain.rpcUrl, true); // the answer comes after the transaction was mined
    const mined = await transfer(wallet.id, [{ asset: 'ETH', recipient: minedPayee, amount: '0.2' }]);
    await tooLow.tick();
    await tooLow.tick();
    expect(await lineOf(mined)).toMatchObject({ status: 'SUBMITTED', nonce: '1', replacedTxHashes: [] });

    await tickUntil([sender()], async () => (await lineOf(pending)).status === 'CONFIRMED' && (await lineOf(mined)).status === 'CONFIRMED');
    expect(await provider.getBalance(pendingPayee)).toBe(ethers.parseEther('0.1'));
    expect(await provider.getBalance(minedPayee)).toBe(ethers.parseEther('0.2'));
    expect(await provider.getTransactionCount(wallet.walletAddress)).toBe(2);
  });

  test('a line whose transaction is mined but reverts fails and is refunded, and the gas it paid leaves custody once: the ledger agrees with the chain', async () => {
    const wallet = await fundedWallet('1');
    // The node estimated the call on other state than it is mined on: the contract takes no coin, so the transaction reverts.
    const misjudging = sender({ estimateGas: async () => 60_000n });
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: assets.USDC.address, amount: '0.1' }]);
    const failed = await tickUntil([misjudging], async () => {
      const line = await lineOf(id);
      return line.status === 'FAILED' && line;
    });
    expect(failed.error).toBe('the transaction reverted on chain');
    const receipt = (await provider.getTransactionReceipt(failed.txHash))!;
    expect(receipt.status).toBe(0);
    const paid = receipt.gasUsed * receipt.gasPrice;
    expect(paid > 0n).toBe(true);
    expect(await provider.getBalance(wallet.walletAddress)).toBe(ethers.parseEther('1') - paid);
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.ETH.id, 'custody')).available).toBe(ethers.parseEther('1') - paid);
    expect(await ledgerEntries(failed.id)).toEqual([`transfer:${failed.id}`, `transfer-refund:${failed.id}`, `gas:${failed.id}`]);

    // Recorded again (a retry of the step after a crash): nothing more is taken.
    const item = await t.keel.platform.db('transfer_items as i').join('transfers as t', 't.id', 'i.transferId').where('i.id', failed.id).first('i.*', 't.organizationId', 't.masterWalletId', 't.addressId', 't.blockchainId');
    await t.keel.platform.db.transaction((trx) => t.keel.services.custodyLedgerSync.failed(trx, item));
    // The deposit watcher sees the fee paid from the address: Keel's line charged it, so it is not taken again.
    await mine(k.chain.rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await t.keel.platform.db('chain_fees').where({ txHash: failed.txHash }).first()) !== undefined);
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.ETH.id, 'custody')).available).toBe(ethers.parseEther('1') - paid);
    const report = await t.keel.services.settlementReconciler.reconcile(t.keel.services.networks.get(chainId)!, { organizationId: org.orgId });
    expect(report.differences.filter((d) => d.walletId === wallet.id)).toEqual([]);
  });

  test('a line the node refuses while one of its transactions can still be mined is not failed or refunded', async () => {
    const wallet = await fundedWallet('1');
    const payee = ethers.Wallet.createRandom().address;
    const refusing = sender({ broadcastTransaction: acceptsThenAnswers({ code: 'INSUFFICIENT_FUNDS', message: 'insufficient funds for gas * price + value' }) });
    await setAutomine(k.chain.rpcUrl, false);
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: payee, amount: '0.3' }]);
    for (let i = 0; i < 3; i++) await refusing.tick();
    const line = await lineOf(id);
    expect(line.status).toBe('SUBMITTED');
    expect(await ledgerEntries(line.id)).toEqual([`transfer:${line.id}`]); // reserved, not refunded
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.ETH.id, 'custody')).available).toBe(ethers.parseEther('0.7'));

    await tickUntil([sender()], async () => (await lineOf(id)).status === 'CONFIRMED');
    expect(await provider.getBalance(payee)).toBe(ethers.parseEther('0.3'));
    expect(await ledgerEntries(line.id)).toEqual([`transfer:${line.id}`, `gas:${line.id}`]);
  });

  test.each([
    ['refuses (the address cannot cover its fee)', { code: 'INSUFFICIENT_FUNDS', message: 'insufficient funds for gas * price + value' }],
    ['answers "replacement underpriced" (it holds another of the line\'s transactions at the nonce)', { code: 'REPLACEMENT_UNDERPRICED', message: 'replacement transaction underpriced' }],
  ])('a fee bump the node %s leaves the line its earlier transaction, which is offered again once dropped and paid once', async (_, answer) => {
    const wallet = await fundedWallet('1');
    const payee = ethers.Wallet.createRandom().address;
    await setAutomine(k.chain.rpcUrl, false);
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: payee, amount: '0.1' }]);
    await sender().tick();
    const line = () => t.keel.platform.db('transfer_items').where({ transferId: id }).first();
    const sent = await line();
    expect(sent.status).toBe('SUBMITTED');

    // The market's base fee jumps tenfold, and the node does not take the dearer transaction.
    const bumping = sender(
      {
        getBlock: async (p, tag) => ({ baseFeePerGas: ((await p.getBlock(tag))!.baseFeePerGas ?? 0n) * 10n }),
        broadcastTransaction: async () => Promise.reject(Object.assign(new Error(answer.message), { code: answer.code })),
      },
      { bumpAfterMs: 0 },
    );
    await bumping.tick();
    const kept = await line();
    expect(kept).toMatchObject({ status: 'SUBMITTED', txHash: sent.txHash, rawTx: sent.rawTx, maxFeePerGas: sent.maxFeePerGas });
    expect(kept.replacedTxHashes).toHaveLength(1); // the refused bump, still watched

    // The node drops the transaction: the one the line kept is offered again, mined, and paid once.
    await rpc(k.chain.rpcUrl, 'hardhat_dropTransaction', [sent.txHash]);
    await tickUntil([sender()], async () => (await lineOf(id)).status === 'CONFIRMED');
    expect(await provider.getBalance(payee)).toBe(ethers.parseEther('0.1'));
  });

  test("a sender that read a line before another watched a fee bump's hash cannot write the line back without it", async () => {
    const wallet = await fundedWallet('1');
    await setAutomine(k.chain.rpcUrl, false);
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: ethers.Wallet.createRandom().address, amount: '0.01' }]);
    await sender().tick();
    const db = t.keel.platform.db;
    const read = await db('transfer_items').where({ transferId: id }).first();
    const bump = ethers.keccak256(ethers.toUtf8Bytes('a bump another worker signed'));
    expect(await moveLine(db, read, { replacedTxHashes: [...read.replacedTxHashes, bump] }, read.replacedTxHashes)).toBe(true);
    // The stale reader (as `requeue` would) writes its own list: refused, the bump's hash stays watched.
    expect(await moveLine(db, read, { status: 'QUEUED', replacedTxHashes: [read.txHash] }, read.replacedTxHashes)).toBe(false);
    expect((await db('transfer_items').where({ id: read.id }).first()).replacedTxHashes).toEqual([bump]);
    await tickUntil([sender()], async () => (await lineOf(id)).status === 'CONFIRMED');
  });

  test('a gas estimate the node does not answer leaves the line queued and reserved; one it refuses fails the line and refunds it', async () => {
    const wallet = await fundedWallet('1', '10');
    const payee = ethers.Wallet.createRandom().address;
    const timingOut = sender({ estimateGas: async () => Promise.reject(Object.assign(new Error('request timeout'), { code: 'TIMEOUT' })) });
    const id = await transfer(wallet.id, [{ asset: 'USDC', recipient: payee, amount: '4' }]);
    for (let i = 0; i < 3; i++) await timingOut.tick();
    const waiting = await lineOf(id);
    expect(waiting).toMatchObject({ status: 'QUEUED', error: expect.stringContaining('did not estimate') });
    expect(await ledgerEntries(waiting.id)).toEqual([`transfer:${waiting.id}`]); // reserved, not refunded
    await tickUntil([sender()], async () => (await lineOf(id)).status === 'CONFIRMED');
    expect(await usdcOf(payee)).toBe(4_000_000n);

    const refusing = sender({ estimateGas: async () => Promise.reject(Object.assign(new Error('execution reverted: ERC20: transfer amount exceeds balance'), { code: 'CALL_EXCEPTION' })) });
    const refused = await transfer(wallet.id, [{ asset: 'USDC', recipient: payee, amount: '1' }]);
    await refusing.tick();
    const failed = await lineOf(refused);
    expect(failed).toMatchObject({ status: 'FAILED', error: expect.stringContaining('the chain refuses the transaction') });
    expect(await ledgerEntries(failed.id)).toEqual([`transfer:${failed.id}`, `transfer-refund:${failed.id}`]);
  });

  test("a gas estimate that fails in a way Keel has no words for shows the line the generic reason, and logs the error once", async () => {
    const wallet = await fundedWallet('1');
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
    const unexpected = new TypeError("Cannot read properties of undefined (reading 'gas')");
    const failing = manualSender(t.keel, { estimateGas: async () => Promise.reject(unexpected) }, {}, logger);
    const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: ethers.Wallet.createRandom().address, amount: '0.01' }]);
    await failing.tick();
    expect(await lineOf(id)).toMatchObject({ status: 'QUEUED', error: `the node did not estimate the transaction's gas (tried again): ${INTERNAL_REASON}` });
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.err?.message === unexpected.message);
    expect(logged).toEqual([expect.objectContaining({ msg: 'gas estimate failed; will retry', err: expect.objectContaining({ type: 'TypeError' }) })]);
    await tickUntil([sender()], async () => (await lineOf(id)).status === 'CONFIRMED');
  });

  describe('a transfer an administrator cancels', () => {
    const cancel = (id: string, client = org.core) => client.request('POST', `/v1/transfers/${id}/cancel`);
    const lineRow = (transferId: string) => t.keel.platform.db('transfer_items').where({ transferId }).orderBy('position').first();

    /** 0.1 ETH sent and not mined (the chain mines only when the test says), then its cancellation signed. */
    /** 0.1 ETH sent and not mined (the chain mines only when the test says). */
    async function sentUnmined() {
      const wallet = await fundedWallet('1');
      const payee = ethers.Wallet.createRandom().address;
      await setAutomine(k.chain.rpcUrl, false);
      const id = await transfer(wallet.id, [{ asset: 'ETH', recipient: payee, amount: '0.1' }]);
      await sender().tick();
      const sent = await lineRow(id);
      expect(sent.status).toBe('SUBMITTED');
      return { wallet, payee, id, sent };
    }

    /** sentUnmined, then its cancellation signed. */
    async function sentThenCancelled() {
      const unmined = await sentUnmined();
      await cancel(unmined.id);
      await sender().tick();
      return { ...unmined, cancelling: await lineRow(unmined.id) };
    }

    /** Ticks (a block mined each round) until the line failed; it names the cancellation. */
    async function failsCancelled(id: string) {
      const failed = await tickUntil([sender()], async () => {
        const line = await lineOf(id);
        return line.status === 'FAILED' && line;
      });
      expect(failed.error).toContain('cancelled');
      return failed;
    }

    test('not yet signed, its lines fail at once and are refunded, nothing sent; an admin key asks, another organisation gets 404, a final transfer 409', async () => {
      const wallet = await fundedWallet('1', '10');
      const payee = ethers.Wallet.createRandom().address;
      const id = await transfer(wallet.id, [{ asset: 'USDC', recipient: payee, amount: '2' }, { asset: 'ETH', recipient: payee, amount: '0.1' }]);

      const writeKey = (await org.core.request('POST', '/v1/api-keys', { body: { name: 'ops', scopes: ['read', 'write'] } })).body.data.secret;
      expect((await cancel(id, org.core.with({ apiKey: writeKey, orgId: org.orgId }))).status).toBe(403);
      expect((await cancel(id, (await t.createOrg()).core)).status).toBe(404);

      const asked = await cancel(id);
      expect(asked.status).toBe(200);
      expect(asked.body.data).toMatchObject({ status: 'QUEUED', cancelRequestedAt: expect.any(String) });
      expect((await cancel(id)).body.data.cancelRequestedAt).toBe(asked.body.data.cancelRequestedAt); // asked again: the first request stands

      await sender().tick();
      const done = (await org.core.request('GET', `/v1/transfers/${id}`)).body.data;
      expect(done).toMatchObject({ status: 'FAILED', items: [{ status: 'FAILED', txHash: null, error: 'cancelled before it was signed' }, { status: 'FAILED', txHash: null }] });
      for (const line of done.items) expect(await ledgerEntries(line.id)).toEqual([`transfer:${line.id}`, `transfer-refund:${line.id}`]);
      expect(await usdcOf(payee)).toBe(0n);
      expect(await provider.getBalance(payee)).toBe(0n);
      const events = (await t.keel.platform.db('outbox_events').whereRaw(`envelope->'data'->>'transferId' = ?`, [id]).orderBy('sequence')).map((r) => [r.type, r.envelope.data.error]);
      expect(events).toEqual([['master.transfer_failed', 'cancelled before it was signed'], ['master.transfer_failed', 'cancelled before it was signed']]);
      expect((await cancel(id)).status).toBe(409);
    });

    test('signed, its nonce is taken by a zero-value transaction to the sender: once mined the line fails, refunded and its gas charged, and the wallet sends again', async () => {
      const { wallet, payee, id, sent, cancelling } = await sentThenCancelled();
      expect(cancelling).toMatchObject({ status: 'SUBMITTED', nonce: sent.nonce, replacedTxHashes: [sent.txHash], cancelTxHashes: [cancelling.txHash] });
      const cancellation = (await provider.getTransaction(cancelling.txHash))!;
      expect(cancellation).toMatchObject({ to: wallet.walletAddress, value: 0n, nonce: Number(sent.nonce), gasLimit: BigInt(cancelling.gasLimit) });
      expect(cancellation.gasLimit >= 21_000n).toBe(true);
      expect(cancellation.maxFeePerGas! > BigInt(sent.maxFeePerGas)).toBe(true);

      // Mined, not yet final: the ledger still holds the amount as on its way out, and the chain, where it stayed, agrees.
      await mine(k.chain.rpcUrl, 1);
      await sender().tick();
      expect((await lineRow(id)).blockNumber).not.toBeNull();
      const report = await t.keel.services.settlementReconciler.reconcile(t.keel.services.networks.get(chainId)!, { organizationId: org.orgId });
      expect(report.differences.filter((d) => d.walletId === wallet.id)).toEqual([]);

      const failed = await failsCancelled(id);
      expect(failed).toMatchObject({ txHash: cancelling.txHash, error: expect.stringContaining('cancelled'), gasFee: expect.any(String) });
      expect(await provider.getBalance(payee)).toBe(0n);
      expect(await ledgerEntries(failed.id)).toEqual([`transfer:${failed.id}`, `transfer-refund:${failed.id}`, `gas:${failed.id}`]);

      const next = await transfer(wallet.id, [{ asset: 'ETH', recipient: payee, amount: '0.05' }]);
      await tickUntil([sender()], async () => (await lineOf(next)).status === 'CONFIRMED');
      expect(await provider.getBalance(payee)).toBe(ethers.parseEther('0.05'));
    });

    test('a cancellation left below the market is bumped as a cancellation', async () => {
      const { wallet, sent, cancelling } = await sentThenCancelled();
      await sender({ getBlock: async (p, tag) => ({ baseFeePerGas: ((await p.getBlock(tag))!.baseFeePerGas ?? 0n) * 10n }) }, { bumpAfterMs: 0 }).tick();
      const bumped = await lineRow(cancelling.transferId);
      expect(bumped.txHash).not.toBe(cancelling.txHash);
      expect(bumped.cancelTxHashes).toEqual([cancelling.txHash, bumped.txHash]);
      expect(bumped.replacedTxHashes).toEqual([sent.txHash, cancelling.txHash]);
      expect(await provider.getTransaction(bumped.txHash)).toMatchObject({ to: wallet.walletAddress, value: 0n, nonce: Number(sent.nonce), gasLimit: BigInt(cancelling.gasLimit) });
      await tickUntil([sender()], async () => (await lineOf(cancelling.transferId)).status === 'FAILED');
    });

    test('a cancellation the node did not get is offered again (the line\'s own, still held, is not mined instead)', async () => {
      const { payee, id } = await sentUnmined();
      await cancel(id);
      await sender({ broadcastTransaction: async () => Promise.reject(Object.assign(new Error('connection reset'), { code: 'NETWORK_ERROR' })) }).tick();
      const cancelling = await lineRow(id);
      expect(await provider.getTransaction(cancelling.txHash)).toBeNull(); // in force, not with the node

      await failsCancelled(id);
      expect(await provider.getBalance(payee)).toBe(0n);
    });

    test('a cancellation is priced above every transaction of the line the node holds, a watched bump dearer than the one in force included', async () => {
      const { wallet, payee, id, sent } = await sentUnmined();
      // A bump the node took whose switch was never recorded (its answer lost): watched, three times dearer than the line's transaction.
      const network = t.keel.services.networks.get(chainId)!;
      const signer = await t.keel.services.sendingWallets.signer(org.orgId, wallet.id, null, provider);
      const fees = { maxFeePerGas: BigInt(sent.maxFeePerGas) * 3n, maxPriorityFeePerGas: BigInt(sent.maxPriorityFeePerGas) * 3n };
      const bump = await network.port.signWithNonce(signer, { nonce: Number(sent.nonce), gasLimit: BigInt(sent.gasLimit), fees, call: { to: payee, value: ethers.parseEther('0.1'), data: '0x' } });
      await t.keel.platform.db('transfer_items').where({ id: sent.id }).update({ replacedTxHashes: [bump.txHash] });
      await provider.broadcastTransaction(bump.raw);

      await cancel(id);
      await sender().tick();
      const cancelling = await lineRow(id);
      expect(BigInt(cancelling.maxFeePerGas) > fees.maxFeePerGas).toBe(true);
      expect(await provider.getTransaction(cancelling.txHash)).not.toBeNull(); // the node took it in the bump's place
      await failsCancelled(id);
      expect(await provider.getBalance(payee)).toBe(0n);
    });

    test("the line's own transaction mined before the cancellation stands: CONFIRMED and paid once", async () => {
      const { payee, id, sent, cancelling } = await sentThenCancelled();
      expect(cancelling.cancelTxHashes).toEqual([cancelling.txHash]);

      // The race goes the other way: the line's own transaction is mined before the cancellation reaches the node.
      await rpc(k.chain.rpcUrl, 'hardhat_dropTransaction', [cancelling.txHash]);
      await provider.broadcastTransaction(sent.rawTx);
      await mine(k.chain.rpcUrl, 1);
      const confirmed = await tickUntil([sender()], async () => {
        const line = await lineOf(id);
        return line.status === 'CONFIRMED' && line;
      });
      expect(confirmed.txHash).toBe(sent.txHash);
      expect(await provider.getBalance(payee)).toBe(ethers.parseEther('0.1'));
      expect(await ledgerEntries(confirmed.id)).toEqual([`transfer:${confirmed.id}`, `gas:${confirmed.id}`]);
    });

    test('a line stuck behind a nonce the node refused is cancelled, and the transfer signed after it goes through', async () => {
      const wallet = await fundedWallet('1');
      const stuckPayee = ethers.Wallet.createRandom().address;
      const nextPayee = ethers.Wallet.createRandom().address;
      await setAutomine(k.chain.rpcUrl, false);
      const stuck = await transfer(wallet.id, [{ asset: 'ETH', recipient: stuckPayee, amount: '0.1' }]);
      const next = await transfer(wallet.id, [{ asset: 'ETH', recipient: nextPayee, amount: '0.1' }]);
      // The node does not answer the first line's broadcast, then refuses it for good; every other transaction it takes.
      let answers = 0;
      const refusingFirst = sender({
        broadcastTransaction: async (p, raw) => {
          if (ethers.Transaction.from(raw).to !== stuckPayee) return p.broadcastTransaction(raw);
          throw answers++ === 0 ? Object.assign(new Error('connection reset'), { code: 'NETWORK_ERROR' }) : Object.assign(new Error('insufficient funds for gas * price + value'), { code: 'INSUFFICIENT_FUNDS' });
        },
      });
      await refusingFirst.tick();
      await new Promise((r) => setTimeout(r, 2_100)); // a signed line is offered again after 2 s
      await refusingFirst.tick();
      expect(await lineRow(stuck)).toMatchObject({ status: 'SIGNED', error: expect.stringContaining('insufficient funds') });
      await mine(k.chain.rpcUrl, 3);
      expect((await lineRow(next)).status).toBe('SUBMITTED'); // waits behind the gap

      await cancel(stuck);
      const done = await tickUntil([refusingFirst], async () => {
        const [a, b] = [await lineOf(stuck), await lineOf(next)];
        return a.status === 'FAILED' && b.status === 'CONFIRMED' && a;
      });
      expect(done.error).toContain('cancelled');
      expect(await provider.getBalance(stuckPayee)).toBe(0n);
      expect(await provider.getBalance(nextPayee)).toBe(ethers.parseEther('0.1'));
    });
  });
});
