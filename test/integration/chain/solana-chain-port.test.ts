/**
 * The Solana chain port against the sandbox Solana network: balances, fees as charged, SOL and SPL
 * transfers (the recipient's token account created and its rent accounted), incoming transfers read
 * from blocks, what a finalized transfer cost as read from the chain (not the estimate), and sending at
 * most once across a crash before broadcast, a crash after it, and a blockhash that expired unseen.
 */
import {
  KeyPairSigner,
  generateKeyPairSigner,
  Signature,
  pipe,
  createTransactionMessage,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  appendTransactionMessageInstructions,
  signTransactionMessageWithSigners,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getInitializeMint2Instruction, getMintToCheckedInstruction } from '@solana-program/token';
import { PreparedTransfer, PreparedTransferStore, sendOnce } from '../../../src/platform/chain-port/chain-port';
import { SolanaChain, TOKEN_2022_PROGRAM } from '../../../src/platform/chain-port/solana-chain';
import { TransferRefused } from '../../../src/platform/chain-port/chain-port';
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { eventually } from '../../support/eventually';

const SOL = 1_000_000_000n;
const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
const usdc = { kind: 'token' as const, address: USDC.address, decimals: 6 };
const native = { kind: 'native' as const };

/** Polls every 20 ms (slots are short here) until `f` answers. */
const until = <T>(_what: string, f: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> => eventually(f, timeoutMs, 20);

/** An in-memory stand-in for the database row a sender keeps; `saves` counts what was recorded. */
function memoryStore(): PreparedTransferStore & { current?: PreparedTransfer; saves: PreparedTransfer[] } {
  const store = {
    current: undefined as PreparedTransfer | undefined,
    saves: [] as PreparedTransfer[],
    load: async () => store.current,
    save: async (p: PreparedTransfer) => {
      store.current = p;
      store.saves.push(p);
    },
  };
  return store;
}

describe('Solana chain port on the sandbox network', () => {
  let devnet: SolanaDevnet;
  let chain: SolanaChain;
  let sender: KeyPairSigner;

  const landed = (p: PreparedTransfer, finality: 'confirmed' | 'final' = 'confirmed') =>
    until(`${p.txId} ${finality}`, async () => {
      const o = await chain.outcome(p);
      return o.state === 'landed' && (finality === 'confirmed' ? o.finality !== 'seen' : o.finality === 'final') ? o : undefined;
    });
  const chargedFee = async (txId: string) => {
    const tx = await chain.rpc.getTransaction(txId as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    return tx!.meta!.fee;
  };

  beforeAll(async () => {
    devnet = await startSolanaDevnet({ slotMs: 20, confirmedLag: 1, finalizedLag: 100 });
    chain = new SolanaChain({ rpcUrl: devnet.rpcUrl, priorityMicroLamports: 2_000n });
    sender = await generateKeyPairSigner();
    await devnet.fund({ to: sender.address, amount: 10n * SOL });
    await devnet.fund({ to: sender.address, mint: { address: USDC.address, decimals: 6 }, amount: 1_000_000_000n });
    await until('the funds to be confirmed', async () => (await chain.balance(sender.address, usdc)) === 1_000_000_000n);
  });
  afterAll(() => devnet?.stop());

  test('balances: SOL and the sum of the owner\'s token accounts for a mint, at a finality', async () => {
    expect(await chain.balance(sender.address, native)).toBe(10n * SOL);
    expect(await chain.balance(sender.address, usdc, 'confirmed')).toBe(1_000_000_000n);
    const nobody = await generateKeyPairSigner();
    expect(await chain.balance(nobody.address, usdc)).toBe(0n);
    expect(chain.isAddress(sender.address)).toBe(true);
    expect(chain.isAddress('0x5FbDB2315678afecb367f032d93F642f64180aa3')).toBe(false);
  });

  test('a SOL transfer costs exactly the amount and the estimated fee (base and priority)', async () => {
    const to = (await generateKeyPairSigner()).address;
    const request = { to, asset: native, amount: SOL / 2n };
    const estimate = await chain.estimateTransfer(sender.address, request);
    expect(estimate.accountCreation).toBe(0n);
    expect(estimate.fee).toBeGreaterThan(5000n); // a priority fee on top of the signature's
    const before = await chain.balance(sender.address, native, 'seen');
    const sent = await sendOnce(chain, sender, request, memoryStore());
    await landed(sent);
    expect(await chargedFee(sent.txId)).toBe(sent.fee.fee);
    expect(before - (await chain.balance(sender.address, native, 'seen'))).toBe(SOL / 2n + sent.fee.fee);
    expect(await chain.balance(to, native)).toBe(SOL / 2n);
  });

  test('a USDC transfer to a new recipient creates its token account, the rent accounted; to it again, none', async () => {
    const to = (await generateKeyPairSigner()).address;
    const request = { to, asset: usdc, amount: 12_500_000n };
    const rent = await chain.rpc.getMinimumBalanceForRentExemption(165n).send();
    const estimate = await chain.estimateTransfer(sender.address, request);
    expect(estimate.accountCreation).toBe(rent);
    expect(estimate.nativeNeeded).toBe(estimate.fee + rent);
    const before = await chain.balance(sender.address, native, 'seen');
    const sent = await sendOnce(chain, sender, request, memoryStore());
    await landed(sent);
    expect(before - (await chain.balance(sender.address, native, 'seen'))).toBe(sent.fee.fee + rent);
    expect(await chain.balance(to, usdc)).toBe(12_500_000n);

    const again = await chain.estimateTransfer(sender.address, request);
    expect(again.accountCreation).toBe(0n);
    const second = await sendOnce(chain, sender, request, memoryStore());
    await landed(second);
    expect(await chain.balance(to, usdc)).toBe(25_000_000n);
  });

  test('a finalized transfer reports what it cost on chain: a SOL one its fee; of two prepared to create the same token account, only the first to land its rent; a failed one its fee', async () => {
    const to = (await generateKeyPairSigner()).address;
    const rent = await chain.rpc.getMinimumBalanceForRentExemption(165n).send();
    const sol = await sendOnce(chain, sender, { to, asset: native, amount: SOL / 10n }, memoryStore());
    // Both prepared before either is sent: each would create the recipient's token account.
    const first = await chain.prepareTransfer(sender, { to, asset: usdc, amount: 1_000_000n });
    const second = await chain.prepareTransfer(sender, { to, asset: usdc, amount: 2_000_000n });
    expect([first.fee.accountCreation, second.fee.accountCreation]).toEqual([rent, rent]);
    await chain.broadcast(first);
    await landed(first);
    await chain.broadcast(second);
    // A transfer that fails on chain (sent without preflight, its USDC gone meanwhile) paid its fee and created nothing.
    const holder = await generateKeyPairSigner();
    await devnet.fund({ to: holder.address, amount: SOL / 10n });
    await devnet.fund({ to: holder.address, mint: { address: USDC.address, decimals: 6 }, amount: 5_000_000n });
    await until('the holder\'s USDC', async () => (await chain.balance(holder.address, usdc)) === 5_000_000n);
    const doomed = await chain.prepareTransfer(holder, { to: (await generateKeyPairSigner()).address, asset: usdc, amount: 5_000_000n });
    expect(doomed.fee.accountCreation).toBe(rent);
    await landed(await sendOnce(chain, holder, { to: sender.address, asset: usdc, amount: 5_000_000n }, memoryStore()));
    await chain.rpc.sendTransaction(doomed.raw as never, { encoding: 'base64', skipPreflight: true }).send();

    const [solDone, firstDone, secondDone, doomedDone] = await Promise.all([sol, first, second, doomed].map((p) => landed(p, 'final')));
    expect(solDone.cost).toEqual({ fee: await chargedFee(sol.txId), accountCreation: 0n });
    expect(firstDone.cost).toEqual({ fee: await chargedFee(first.txId), accountCreation: rent });
    expect(secondDone.cost).toEqual({ fee: await chargedFee(second.txId), accountCreation: 0n });
    expect(doomedDone).toMatchObject({ failed: true, cost: { fee: await chargedFee(doomed.txId), accountCreation: 0n } });
    expect(await chain.balance(to, usdc)).toBe(3_000_000n);
  }, 60_000);

  test('incoming transfers are read from blocks: SOL and token deposits to watched owners, with sender and amounts', async () => {
    const a = (await generateKeyPairSigner()).address;
    const b = (await generateKeyPairSigner()).address;
    const unwatched = (await generateKeyPairSigner()).address;
    const from = await chain.height('confirmed');
    const sol = await sendOnce(chain, sender, { to: a, asset: native, amount: SOL / 4n }, memoryStore());
    const tok = await sendOnce(chain, sender, { to: b, asset: usdc, amount: 3_000_000n }, memoryStore());
    await sendOnce(chain, sender, { to: unwatched, asset: usdc, amount: 1n }, memoryStore());
    const last = await landed(tok);
    await landed(sol);
    const to = Math.max(last.height, (await chain.outcome(sol)).state === 'landed' ? last.height : 0);
    const scanned = await chain.scan(from, to, { addresses: new Set([a, b]) }, 'confirmed');
    const byTx = new Map(scanned.transfers.map((t) => [t.txId, t]));
    expect(scanned.transfers).toHaveLength(2);
    expect(byTx.get(sol.txId)).toMatchObject({ to: a, from: sender.address, asset: { kind: 'native' }, amount: SOL / 4n, position: `native:${a}` });
    expect(byTx.get(tok.txId)).toMatchObject({ to: b, from: sender.address, asset: { kind: 'token', address: USDC.address }, amount: 3_000_000n });
    const t = byTx.get(tok.txId)!;
    expect(scanned.blocks.find((blk) => blk.height === t.height)?.hash).toBe(t.blockHash);
    expect(await chain.blockHash(t.height, 'confirmed')).toBe(t.blockHash);
    // The block's time, as the scan read it and as blockTime reads it (a checkout's address retirement uses it).
    const time = await chain.blockTime(t.height);
    expect(time).toBe(t.timestamp);
    expect(Math.abs(time! * 1000 - Date.now())).toBeLessThan(120_000);
  });

  test('a block rolled back before finality: its deposit is gone, its hash reads as null and its slot as no block there (a slot not reached yet as unknown)', async () => {
    const to = (await generateKeyPairSigner()).address;
    const sent = await sendOnce(chain, sender, { to, asset: native, amount: SOL / 10n }, memoryStore());
    const o = await landed(sent);
    const block = await chain.rpc.getBlock(BigInt(o.height), { commitment: 'confirmed', transactionDetails: 'none', rewards: false }).send();
    expect(await chain.blockHash(o.height, 'confirmed')).toBe(block!.blockhash);
    // Back to the block before it (its blockhash, older, stays valid).
    devnet.rollback(Number(block!.parentSlot));
    expect(await chain.outcome(sent)).toEqual({ state: 'pending' });
    expect(await chain.balance(to, native, 'seen')).toBe(0n);
    await until('the abandoned slot to be passed', async () => (await chain.height('confirmed')) > o.height);
    expect(await chain.blockHash(o.height, 'confirmed')).toBeNull();
    expect(await chain.blockAt(o.height, 'confirmed')).toBe('none');
    expect(await chain.blockAt((await chain.height('confirmed')) + 1_000, 'confirmed')).toBe('unknown');
    // Sent again while its blockhash is still valid, the same transaction lands once.
    await chain.broadcast(sent);
    await landed(sent);
    expect(await chain.balance(to, native)).toBe(SOL / 10n);
  });

  test('a crash after recording, before broadcast: the retry sends the same transaction, charged once', async () => {
    const to = (await generateKeyPairSigner()).address;
    const request = { to, asset: usdc, amount: 1_000_000n };
    const store = memoryStore();
    const before = await chain.balance(sender.address, native, 'seen');
    await store.save(await chain.prepareTransfer(sender, request)); // ...and the process died here
    const retried = await sendOnce(chain, sender, request, store);
    expect(retried.txId).toBe(store.saves[0].txId);
    await landed(retried);
    // A crash after broadcast too: the next retry finds it landed and sends nothing new.
    const third = await sendOnce(chain, sender, request, store);
    expect(third.txId).toBe(retried.txId);
    expect(store.saves).toHaveLength(1);
    expect(await chain.balance(to, usdc)).toBe(1_000_000n);
    expect(before - (await chain.balance(sender.address, native, 'seen'))).toBe(retried.fee.fee + retried.fee.accountCreation);
  });

  test('a recorded transaction whose blockhash expired unseen is replaced only once it can no longer land', async () => {
    const to = (await generateKeyPairSigner()).address;
    const request = { to, asset: native, amount: SOL / 8n };
    const store = memoryStore();
    const stale = await chain.prepareTransfer(sender, request);
    await store.save(stale);
    expect(await chain.outcome(stale)).toEqual({ state: 'pending' });
    await until('the blockhash to expire at final', async () => ((await chain.outcome(stale)).state === 'expired' ? true : undefined), 30_000);
    expect(Number(await chain.rpc.getBlockHeight({ commitment: 'finalized' }).send())).toBeGreaterThan(stale.validThrough!);
    const fresh = await sendOnce(chain, sender, request, store);
    expect(fresh.txId).not.toBe(stale.txId);
    expect(store.saves.map((s) => s.txId)).toEqual([stale.txId, fresh.txId]);
    await landed(fresh);
    // The old one, sent now, is refused by the cluster and never lands.
    await chain.broadcast(stale);
    expect(await chain.outcome(stale)).toEqual({ state: 'expired' });
    expect(await chain.balance(to, native)).toBe(SOL / 8n);
  }, 60_000);

  test('a transfer the sender cannot pay for is refused before anything is sent or charged; a mint that is not one is refused', async () => {
    const poor = await generateKeyPairSigner();
    await devnet.fund({ to: poor.address, amount: SOL / 100n });
    await until('the grant', async () => (await chain.balance(poor.address, native, 'seen')) > 0n);
    await expect(chain.prepareTransfer(poor, { to: sender.address, asset: native, amount: SOL })).rejects.toBeInstanceOf(TransferRefused);
    // Payable when prepared, not when sent (the funds went elsewhere meanwhile): refused by preflight, nothing charged.
    const first = await chain.prepareTransfer(poor, { to: sender.address, asset: native, amount: (SOL / 100n) * 6n / 10n });
    const second = await chain.prepareTransfer(poor, { to: sender.address, asset: native, amount: (SOL / 100n) * 7n / 10n });
    await chain.broadcast(first);
    await landed(first);
    const left = await chain.balance(poor.address, native, 'seen');
    await expect(chain.broadcast(second)).rejects.toBeInstanceOf(TransferRefused);
    expect(await chain.balance(poor.address, native, 'seen')).toBe(left);
    await expect(chain.estimateTransfer(sender.address, { to: poor.address, asset: { kind: 'token', address: poor.address, decimals: 6 }, amount: 1n })).rejects.toBeInstanceOf(TransferRefused);
    await expect(chain.estimateTransfer(sender.address, { to: (await generateKeyPairSigner()).address, asset: native, amount: 1000n })).rejects.toThrow(/new Solana account needs at least/);
  });

  test('Token-2022: balances read, deposits seen, and a transfer creates the recipient\'s (larger) token account with its rent', async () => {
    // A Token-2022 mint of the sender's, and tokens minted to the sender.
    const mint = await generateKeyPairSigner();
    const [ata] = await findAssociatedTokenPda({ owner: sender.address, mint: mint.address, tokenProgram: TOKEN_2022_PROGRAM });
    const { value: latest } = await chain.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const setup = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(sender, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getCreateAccountInstruction({ payer: sender, newAccount: mint, lamports: 10_000_000n, space: 82n, programAddress: TOKEN_2022_PROGRAM }),
              getInitializeMint2Instruction({ mint: mint.address, decimals: 2, mintAuthority: sender.address }, { programAddress: TOKEN_2022_PROGRAM }),
              getCreateAssociatedTokenIdempotentInstruction({ payer: sender, ata, owner: sender.address, mint: mint.address, tokenProgram: TOKEN_2022_PROGRAM }),
              getMintToCheckedInstruction({ mint: mint.address, token: ata, mintAuthority: sender, amount: 10_000n, decimals: 2 }, { programAddress: TOKEN_2022_PROGRAM }),
            ],
            m,
          ),
      ),
    );
    await chain.rpc.sendTransaction(getBase64EncodedWireTransaction(setup), { encoding: 'base64' }).send();
    await landed({ txId: getSignatureFromTransaction(setup), raw: getBase64EncodedWireTransaction(setup), validThrough: null, validFrom: null, nonce: null, fee: { fee: 0n, accountCreation: 0n, nativeNeeded: 0n } });
    const token = { kind: 'token' as const, address: mint.address, decimals: 2 };
    expect(await chain.balance(sender.address, token)).toBe(10_000n);

    const to = (await generateKeyPairSigner()).address;
    const from = await chain.height('confirmed');
    const estimate = await chain.estimateTransfer(sender.address, { to, asset: token, amount: 2_500n });
    const rent = await chain.rpc.getMinimumBalanceForRentExemption(170n).send();
    expect(estimate.accountCreation).toBe(rent);
    const before = await chain.balance(sender.address, native, 'seen');
    const sent = await sendOnce(chain, sender, { to, asset: token, amount: 2_500n }, memoryStore());
    const o = await landed(sent);
    expect(before - (await chain.balance(sender.address, native, 'seen'))).toBe(sent.fee.fee + rent);
    expect(await chain.balance(to, token)).toBe(2_500n);
    const scanned = await chain.scan(from, o.height, { addresses: new Set([to]) }, 'confirmed');
    expect(scanned.transfers).toEqual([expect.objectContaining({ txId: sent.txId, to, asset: { kind: 'token', address: mint.address }, amount: 2_500n })]);
  });

  test('without a configured priority fee, the median of the recent non-zero fees of the accounts written is paid', async () => {
    const auto = new SolanaChain({ rpcUrl: devnet.rpcUrl });
    const to = (await generateKeyPairSigner()).address;
    // The sender's earlier transfers paid 2,000 micro-lamports a unit.
    const estimate = await auto.estimateTransfer(sender.address, { to, asset: usdc, amount: 1n });
    const floor = new SolanaChain({ rpcUrl: devnet.rpcUrl, priorityMicroLamports: 0n });
    const unprioritised = await floor.estimateTransfer(sender.address, { to, asset: usdc, amount: 1n });
    expect(unprioritised.fee).toBe(5000n);
    expect(estimate.fee).toBeGreaterThan(5000n);
  });
});

describe('Solana chain port: a transaction not found is judged expired only where the node can show it never landed', () => {
  let devnet: SolanaDevnet;
  let chain: SolanaChain;
  let sender: KeyPairSigner;
  /** What the node keeps: transaction history served or not, and the first slot its ledger holds. */
  const setHistory = (history: { served?: boolean; firstAvailableSlot?: number }) =>
    fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'keel_setHistory', params: [history] }) });
  const finalizedSlot = async () => Number(await chain.rpc.getSlot({ commitment: 'finalized' }).send());

  beforeAll(async () => {
    // Slots of 30 ms: a check within the status cache's reach (about 100 slots after the blockhash expires) is not a race.
    devnet = await startSolanaDevnet({ slotMs: 30, confirmedLag: 1, finalizedLag: 32 });
    chain = new SolanaChain({ rpcUrl: devnet.rpcUrl, priorityMicroLamports: 2_000n });
    sender = await generateKeyPairSigner();
    await devnet.fund({ to: sender.address, amount: 10n * SOL });
    await until('the funds to be confirmed', async () => (await chain.balance(sender.address, native)) === 10n * SOL);
  });
  afterAll(() => devnet?.stop());

  test('a node without transaction history: expired while its status cache still reaches the blockhash, undetermined once not; a pruned ledger likewise', async () => {
    await setHistory({ served: false });
    const to = (await generateKeyPairSigner()).address;
    const request = { to, asset: native, amount: SOL / 10n };
    const stale = await chain.prepareTransfer(sender, { ...request, amount: SOL / 20n });
    const paid = await chain.prepareTransfer(sender, request);
    expect(paid.validFrom).toBeGreaterThan(0);
    await chain.broadcast(paid);
    const landedAt = await until('the payment to land', async () => {
      const o = await chain.outcome(paid);
      return o.state === 'landed' ? o.height : undefined;
    });
    // Checked promptly, the status cache shows that the unsent one never landed.
    await until('the unsent one to expire at final', async () => ((await chain.outcome(stale)).state === 'expired' ? true : undefined), 30_000);

    // Once the status cache has forgotten the payment's slot, the node answers "not found" for it:
    // never expired (a replacement would pay twice), and a retry neither sends nor signs anything.
    await until('the status cache to forget the payment', async () => (await finalizedSlot()) > landedAt + 300, 30_000);
    const undetermined = await chain.outcome(paid);
    expect(undetermined).toEqual({ state: 'undetermined', reason: expect.stringContaining('it does not serve transaction history') });
    const store = memoryStore();
    await store.save(paid);
    expect((await sendOnce(chain, sender, request, store)).txId).toBe(paid.txId);
    expect(store.saves).toHaveLength(1);

    await setHistory({ served: true, firstAvailableSlot: landedAt + 1 });
    expect(await chain.outcome(paid)).toEqual({ state: 'undetermined', reason: expect.stringContaining(`its ledger begins at slot ${landedAt + 1}`) });
    // A node whose history reaches back: the payment is found, and the unsent one is expired.
    await setHistory({ firstAvailableSlot: 0 });
    expect(await chain.outcome(paid)).toMatchObject({ state: 'landed', height: landedAt });
    expect(await chain.outcome(stale)).toEqual({ state: 'expired' });
    expect(await chain.balance(to, native)).toBe(SOL / 10n);
  }, 60_000);
});
