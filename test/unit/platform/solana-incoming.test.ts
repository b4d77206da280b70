/**
 * Deposit detection on Solana reads balance changes, not instructions: these are the rules that turn
 * one transaction's meta (as getBlock answers it) into transfers into watched addresses.
 */
import { createHash } from 'node:crypto';
import { incomingOf } from '../../../src/platform/chain-port/solana-chain';

const at = { height: 10, blockHash: 'H', timestamp: 1_700_000_000 };
const MINT = 'Mint111111111111111111111111111111111111111';
const OTHER_MINT = 'Mint222222222222222222222222222222222222222';

function tx(meta: Record<string, unknown>, keys: string[]) {
  return { transaction: { signatures: ['sig1'], message: { accountKeys: keys } }, meta: { err: null, preTokenBalances: [], postTokenBalances: [], ...meta } } as never;
}
const bal = (accountIndex: number, mint: string, owner: string, amount: string) => ({ accountIndex, mint, owner, uiTokenAmount: { amount } });

test('SOL into a watched address: the growth of its balance, from the account that paid it', () => {
  const t = tx({ preBalances: [10_000n, 0n, 1n], postBalances: [4_000n, 5_000n, 1n] }, ['payer', 'deposit', 'program']);
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([
    // The index a record keys it by: the first 31 bits of the position's SHA-256, the same on every scan.
    { txId: 'sig1', position: 'native:deposit', index: createHash('sha256').update('native:deposit').digest().readUInt32BE(0) >>> 1, batchIndex: 0, height: 10, blockHash: 'H', timestamp: 1_700_000_000, to: 'deposit', from: 'payer', alsoFrom: [], asset: { kind: 'native' }, amount: 5_000n },
  ]);
});

test('a watched address that only paid (its balance fell) received nothing; unwatched addresses are ignored', () => {
  const t = tx({ preBalances: [10_000n, 0n], postBalances: [4_000n, 5_000n] }, ['deposit', 'elsewhere']);
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([]);
});

test('tokens: credited to the owner of the token account that grew, with the raw mint; several accounts of one owner and mint add up', () => {
  const t = tx(
    {
      preBalances: [0n, 0n, 0n, 0n],
      postBalances: [0n, 0n, 0n, 0n],
      preTokenBalances: [bal(1, MINT, 'sender', '100'), bal(2, MINT, 'deposit', '5')],
      postTokenBalances: [bal(1, MINT, 'sender', '60'), bal(2, MINT, 'deposit', '25'), bal(3, MINT, 'deposit', '20')],
    },
    ['payer', 'ataS', 'ataD', 'otherD'],
  );
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([
    expect.objectContaining({ position: `token:${MINT}:deposit`, to: 'deposit', from: 'sender', asset: { kind: 'token', address: MINT }, amount: 40n }),
  ]);
});

test('a deposit of another mint is reported with that mint (the caller decides what it accepts); a closed sender account still names the sender', () => {
  const t = tx(
    {
      preBalances: [0n, 0n, 0n],
      postBalances: [0n, 0n, 0n],
      preTokenBalances: [bal(1, OTHER_MINT, 'sender', '7')],
      postTokenBalances: [bal(2, OTHER_MINT, 'deposit', '7')],
    },
    ['payer', 'ataS', 'ataD'],
  );
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'sender', asset: { kind: 'token', address: OTHER_MINT }, amount: 7n })]);
});

test('a failed transaction moves nothing, whatever its balances say; addresses loaded from lookup tables are read too', () => {
  const failed = { transaction: { signatures: ['s'], message: { accountKeys: ['payer', 'deposit'] } }, meta: { err: { InstructionError: [0, 'Custom'] }, preBalances: [10n, 0n], postBalances: [5n, 5n] } } as never;
  expect(incomingOf(failed, new Set(['deposit']), at)).toEqual([]);
  const loaded = tx({ preBalances: [10_000n, 0n], postBalances: [4_000n, 6_000n], loadedAddresses: { writable: ['deposit'], readonly: [] } }, ['payer']);
  expect(incomingOf(loaded, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', amount: 6_000n, from: 'payer' })]);
});

test('SOL moved out of several accounts: each is a sender, the one that lost the most is `from`; a fee payer that only paid the fee is none', () => {
  // A clean fee payer (the fee only) co-signs the listed sender's transfer; a third signer adds 1 lamport.
  const t = tx({ fee: 10_000n, preBalances: [50_000n, 9_000_000n, 100n, 0n], postBalances: [40_000n, 1_000_000n, 99n, 8_000_001n] }, ['payer', 'sender', 'dust', 'deposit']);
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'sender', alsoFrom: ['dust'], amount: 8_000_001n })]);
  // A fee payer that also sent SOL is a sender; the fee alone counts only when no account lost SOL beyond fees.
  const paying = tx({ fee: 10_000n, preBalances: [50_000n, 9_000_000n, 0n], postBalances: [39_000n, 1_000_000n, 8_001_000n] }, ['payer', 'sender', 'deposit']);
  expect(incomingOf(paying, new Set(['deposit']), at)).toEqual([expect.objectContaining({ from: 'sender', alsoFrom: ['payer'] })]);
  const feeOnly = tx({ fee: 10_000n, preBalances: [50_000n, 0n], postBalances: [40_000n, 0n] }, ['payer', 'deposit']);
  expect(incomingOf(feeOnly, new Set(['deposit']), at)).toEqual([]);
});

test('tokens moved out of several owners: each is a sender, the one that lost the most of the mint is `from` whatever the order; an owner moving between its own accounts is a sender too (an account of it paid out); another mint is not the deposit\'s', () => {
  const t = tx(
    {
      preBalances: [0n, 0n, 0n, 0n, 0n, 0n, 0n],
      postBalances: [0n, 0n, 0n, 0n, 0n, 0n, 0n],
      preTokenBalances: [bal(1, MINT, 'sender', '1000'), bal(2, MINT, 'clean', '5'), bal(4, MINT, 'self', '9'), bal(5, OTHER_MINT, 'other', '50')],
      postTokenBalances: [bal(1, MINT, 'sender', '0'), bal(2, MINT, 'clean', '4'), bal(3, MINT, 'deposit', '1001'), bal(4, MINT, 'self', '0'), bal(6, MINT, 'self', '9'), bal(5, OTHER_MINT, 'other', '0')],
    },
    ['payer', 'ataS', 'ataC', 'ataD', 'selfA', 'otherA', 'selfB'],
  );
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'sender', alsoFrom: ['self', 'clean'], asset: { kind: 'token', address: MINT }, amount: 1001n })]);
});

test('senders are counted account by account, never netted per owner: an owner paying from one token account while an accomplice tops up another of its accounts by as much is a sender', () => {
  // The listed owner's first account pays the deposit 9; the accomplice's account refills its second account with 9.
  const t = tx(
    {
      preBalances: [0n, 0n, 0n, 0n, 0n],
      postBalances: [0n, 0n, 0n, 0n, 0n],
      preTokenBalances: [bal(1, MINT, 'listed', '9'), bal(2, MINT, 'listed', '0'), bal(3, MINT, 'accomplice', '9'), bal(4, MINT, 'deposit', '0')],
      postTokenBalances: [bal(1, MINT, 'listed', '0'), bal(2, MINT, 'listed', '9'), bal(3, MINT, 'accomplice', '0'), bal(4, MINT, 'deposit', '9')],
    },
    ['accomplice', 'ataL1', 'ataL2', 'ataA', 'ataD'],
  );
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'listed', alsoFrom: ['accomplice'], amount: 9n })]);
  // Its losses add up over its accounts (what it gained elsewhere offsets none of them): 9 + 2 before the accomplice's 10.
  const two = tx(
    {
      preBalances: [0n, 0n, 0n, 0n, 0n, 0n],
      postBalances: [0n, 0n, 0n, 0n, 0n, 0n],
      preTokenBalances: [bal(1, MINT, 'listed', '9'), bal(2, MINT, 'listed', '2'), bal(3, MINT, 'listed', '0'), bal(4, MINT, 'accomplice', '10'), bal(5, MINT, 'deposit', '0')],
      postTokenBalances: [bal(1, MINT, 'listed', '0'), bal(2, MINT, 'listed', '0'), bal(3, MINT, 'listed', '10'), bal(4, MINT, 'accomplice', '0'), bal(5, MINT, 'deposit', '11')],
    },
    ['accomplice', 'ataL1', 'ataL2', 'ataL3', 'ataA', 'ataD'],
  );
  expect(incomingOf(two, new Set(['deposit']), at)).toEqual([expect.objectContaining({ from: 'listed', alsoFrom: ['accomplice'], amount: 11n })]);
});

test('SOL out of a token account (a wrapped-SOL account closed into the deposit address) is sent by its owner before when the owner signed the transaction, not by the account', () => {
  const WSOL = 'So11111111111111111111111111111111111111112';
  const t = tx(
    { fee: 5_000n, preBalances: [1_000_000n, 2_039_280n, 0n], postBalances: [995_000n, 0n, 2_039_280n], preTokenBalances: [bal(1, WSOL, 'listed', '0')], postTokenBalances: [] },
    ['listed', 'wsolL', 'deposit'],
  );
  expect(incomingOf(t, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'listed', alsoFrom: [], asset: { kind: 'native' }, amount: 2_039_280n })]);
});

test("SOL out of a token account in a transaction its owner did not sign (its close authority, another, closed it) is sent by the account, not by its owner: a token account's SOL is not its owner's", () => {
  // An outsider handed the victim an account it can still close, with 2 SOL in it, then closes it into its own address.
  const t = tx(
    { fee: 5_000n, preBalances: [1_000_000n, 2_002_039_280n, 0n], postBalances: [995_000n, 0n, 2_002_039_280n], preTokenBalances: [bal(1, MINT, 'victim', '0')], postTokenBalances: [] },
    ['attacker', 'handedOver', 'deposit'],
  );
  expect(incomingOf(t, new Set(['deposit', 'victim']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'handedOver', alsoFrom: [], asset: { kind: 'native' }, amount: 2_002_039_280n })]);
  // Closed into the victim itself: a deposit into it from the account, not a transfer from itself to itself.
  const intoOwner = tx(
    { fee: 5_000n, preBalances: [1_000_000n, 2_002_039_280n, 7n], postBalances: [995_000n, 0n, 2_002_039_287n], preTokenBalances: [bal(1, MINT, 'victim', '0')], postTokenBalances: [] },
    ['attacker', 'handedOver', 'victim'],
  );
  expect(incomingOf(intoOwner, new Set(['victim']), at)).toEqual([expect.objectContaining({ to: 'victim', from: 'handedOver', alsoFrom: [], amount: 2_002_039_280n })]);
});

test("SOL into a token account a watched address owns (not into the address) is no deposit, of SOL or of the token: it is not the address's SOL, and only closing the account frees it", () => {
  // 0.5 SOL sent to the deposit's USDC account, its token balance unchanged.
  const sent = tx({ fee: 5_000n, preBalances: [1_000_000_000n, 2_039_280n], postBalances: [499_995_000n, 502_039_280n], preTokenBalances: [bal(1, MINT, 'deposit', '7')], postTokenBalances: [bal(1, MINT, 'deposit', '7')] }, ['payer', 'ataD']);
  expect(incomingOf(sent, new Set(['deposit']), at)).toEqual([]);
  // A token deposit creating the deposit's token account: the tokens are credited, the account's rent is not SOL of the deposit's.
  const created = tx({ fee: 5_000n, preBalances: [1_000_000_000n, 0n, 0n], postBalances: [997_955_720n, 2_039_280n, 0n], preTokenBalances: [bal(2, MINT, 'sender', '9')], postTokenBalances: [bal(1, MINT, 'deposit', '9'), bal(2, MINT, 'sender', '0')] }, ['sender', 'ataD', 'ataS']);
  expect(incomingOf(created, new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', asset: { kind: 'token', address: MINT }, amount: 9n })]);
});

test('a token account handed to another owner in the transaction (SetAuthority) is sent by its owner before: what it held left that owner, whoever holds it after (a stranger, or the receiving address itself)', () => {
  // The sender moves 5 of its 10 into the deposit's account, then hands its account (5 left) over.
  const handedTo = (newOwner: string) =>
    tx(
      { preBalances: [0n, 0n, 0n], postBalances: [0n, 0n, 0n], preTokenBalances: [bal(1, MINT, 'sender', '10'), bal(2, MINT, 'deposit', '0')], postTokenBalances: [bal(1, MINT, newOwner, '5'), bal(2, MINT, 'deposit', '5')] },
      ['sender', 'ataS', 'ataD'],
    );
  expect(incomingOf(handedTo('stranger'), new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'sender', alsoFrom: [], amount: 5n })]);
  expect(incomingOf(handedTo('deposit'), new Set(['deposit']), at)).toEqual([expect.objectContaining({ to: 'deposit', from: 'sender', alsoFrom: [], amount: 5n })]);
});
