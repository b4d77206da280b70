import { ethers } from 'ethers';
import { NATIVE_TOKEN, packDeltas, TokenSlots } from '../../../src/modules/settlement/settlement-contract';

/**
 * A batch's deltas as KeelSettlement (version 2) reads them: per balance slot, slots ascending, the
 * slot's two tokens, a count, and per account one record with both tokens' changes in
 * sign-magnitude form.
 */
const USDC = ethers.getAddress('0x5fbdb2315678afecb367f032d93f642f64180aa3');
const DAI = ethers.getAddress('0xe7f1725e7734ce288f8367e1bb143e90bb3f0512');
const USDT = ethers.getAddress('0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0');
const alice = ethers.getAddress('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
const bob = ethers.getAddress('0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc');
// Native 0 and USDC 1 share slot 0; DAI 2 and USDT 3 share slot 1.
const where: TokenSlots = {
  indices: new Map([[NATIVE_TOKEN, 0], [USDC, 1], [DAI, 2], [USDT, 3]]),
  pairs: new Map<number, [string, string]>([[0, [NATIVE_TOKEN, USDC]], [1, [DAI, USDT]]]),
};
const hex = (n: bigint, bytes: number) => ethers.toBeHex(n, bytes).slice(2);
const debit = (n: bigint) => hex((1n << 127n) | n, 16);
const credit = (n: bigint) => hex(n, 16);

test('one record per account and slot, both tokens of the slot in it; slots ascending, accounts by address; debits carry the top bit', () => {
  const packed = packDeltas(
    [
      { account: bob, token: USDT, amount: -7n },
      { account: bob, token: USDC, amount: 500n },
      { account: alice, token: USDC, amount: -501n },
      { account: alice, token: NATIVE_TOKEN, amount: 10n ** 18n },
      { account: bob, token: NATIVE_TOKEN, amount: -(10n ** 18n) },
      { account: alice, token: USDT, amount: 7n },
    ],
    where,
  );
  const expected = [
    NATIVE_TOKEN.slice(2), USDC.slice(2), hex(2n, 2),
    bob.slice(2), debit(10n ** 18n), credit(500n),
    alice.slice(2), credit(10n ** 18n), debit(501n),
    DAI.slice(2), USDT.slice(2), hex(2n, 2),
    bob.slice(2), credit(0n), debit(7n),
    alice.slice(2), credit(0n), credit(7n),
  ].join('');
  expect(packed.slice(2).toLowerCase()).toBe(expected.toLowerCase());
  expect(ethers.dataLength(packed)).toBe(2 * 42 + 4 * 52);
});

test('a token the contract has no index for, or a change past 127 bits, is refused before anything is sent', () => {
  expect(() => packDeltas([{ account: alice, token: ethers.Wallet.createRandom().address, amount: 1n }], where)).toThrow(/has no index in the settlement contract/);
  expect(() => packDeltas([{ account: alice, token: USDC, amount: 1n << 127n }], where)).toThrow(/does not fit/);
  expect(() => packDeltas([{ account: alice, token: USDC, amount: -(1n << 127n) }], where)).toThrow(/does not fit/);
  expect(packDeltas([], where)).toBe('0x');
});
