import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isAddress } from '@solana/kit';
import { SanctionsScreen } from '../../../src/modules/aml/sanctions-screen';
import { readSanctionsFiles, shippedSanctionsDirectory, shippedSanctionsSnapshot } from '../../../src/modules/aml/sanctions-files';

const shipped = shippedSanctionsSnapshot();
const screen = new SanctionsScreen(shipped);
const firstLine = (list: string) => readFileSync(path.join(shippedSanctionsDirectory(), `sanctioned_addresses_${list}.txt`), 'utf8').split('\n')[0].trim();

describe('the shipped snapshot', () => {
  test('is the OFAC snapshot with its date, every list file loaded', () => {
    expect(shipped.listDate).toBe('2024-09-27');
    expect(shipped.lists.map((l) => l.name)).toEqual(expect.arrayContaining(['ETH', 'ARB', 'BSC', 'USDT', 'USDC', 'XBT', 'TRX', 'XMR']));
    const eth = shipped.lists.find((l) => l.name === 'ETH')!;
    expect(eth.addresses).toHaveLength(readFileSync(path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_ETH.txt'), 'utf8').trim().split('\n').length);
    expect(screen.info().addressCount).toBeGreaterThan(600);
  });
});

describe('screening', () => {
  test('an EVM address matches in any case, with the entry as the list writes it', () => {
    const listed = firstLine('ETH');
    for (const asked of [listed, listed.toLowerCase(), `0x${listed.slice(2).toUpperCase()}`]) {
      const r = screen.screen(asked);
      expect(r).toEqual({ address: asked, sanctioned: true, matches: expect.arrayContaining([{ list: 'ETH', address: listed }]) });
    }
  });

  test('an EVM address filed under several lists carries every list it is on', () => {
    const usdt = shipped.lists.find((l) => l.name === 'USDT')!.addresses.map((a) => a.toLowerCase());
    const eth = new Set(shipped.lists.find((l) => l.name === 'ETH')!.addresses.map((a) => a.toLowerCase()));
    const both = usdt.find((a) => eth.has(a))!;
    const onlyUsdt = usdt.find((a) => !eth.has(a))!;
    expect(screen.screen(both).matches.map((m) => m.list)).toEqual(expect.arrayContaining(['ETH', 'USDT']));
    const arb = shipped.lists.find((l) => l.name === 'ARB')!.addresses[0];
    expect(screen.screen(arb.toLowerCase()).matches.map((m) => m.list)).toEqual(expect.arrayContaining(['ARB', 'BSC', 'ETH']));
    // An address only on the USDT list still matches an EVM check (one key space for every EVM list).
    expect(screen.screen(onlyUsdt.toUpperCase().replace('0X', '0x')).matches.map((m) => m.list)).toContain('USDT');
  });

  test('other chains compare exactly: a Bitcoin or Tron address in another case is a different address', () => {
    const btc = firstLine('XBT');
    const trx = firstLine('TRX');
    expect(screen.screen(btc).sanctioned).toBe(true);
    expect(screen.screen(` ${trx} `).matches).toEqual([{ list: 'TRX', address: trx }]);
    expect(screen.screen(btc.toLowerCase()).sanctioned).toBe(false);
  });

  test('Bech32 and CashAddr addresses, whose case means nothing, match in either case (CashAddr with or without its prefix)', () => {
    const bech32 = shipped.lists.find((l) => l.name === 'XBT')!.addresses.find((a) => a.startsWith('bc1'))!;
    expect(screen.screen(bech32.toUpperCase()).matches).toEqual([{ list: 'XBT', address: bech32 }]);
    const cash = shipped.lists.find((l) => l.name === 'BCH')!.addresses.find((a) => a.startsWith('q'))!;
    expect(screen.screen(`bitcoincash:${cash.toUpperCase()}`).matches).toEqual([{ list: 'BCH', address: cash }]);
  });

  test('Solana (Base58) addresses compare exactly: a case variant is another address, even one that looks like Bech32 or CashAddr', () => {
    // Real 32-byte Solana addresses: a key, one starting like a testnet Bech32 address, one shaped like a CashAddr.
    const key = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    const bech32Like = 'tb1QpZry9x8GF2tvdw3sJN54KHce6MUa7qpzry9x8gf';
    const cashLike = 'qPzry9x8GF2tvdw3sJN54KHce6MUa7qpzry9x8gf2tv';
    for (const a of [key, bech32Like, cashLike]) expect(isAddress(a)).toBe(true);
    const s = new SanctionsScreen({ source: 'test', listDate: null, lists: [{ name: 'SOL', addresses: [key, bech32Like, cashLike] }] });
    for (const a of [key, bech32Like, cashLike]) {
      expect(s.screen(` ${a} `).matches).toEqual([{ list: 'SOL', address: a }]);
      const variant = a.replace(/[a-z]/, (c) => c.toUpperCase());
      expect(variant).not.toBe(a);
      expect(s.screen(variant).sanctioned).toBe(false);
      expect(s.screen(a.toLowerCase()).sanctioned).toBe(false);
    }
    expect(s.info().addressCount).toBe(3);
  });

  test('an unlisted or malformed address is clear', () => {
    for (const a of ['0x000000000000000000000000000000000000dEaD', '', 'not-an-address', '0x01e2919679362dFBC9ee1644Ba9C6da6D6245BB']) {
      expect(screen.screen(a)).toEqual({ address: a, sanctioned: false, matches: [] });
    }
  });

  test('replace swaps the lists in one step', () => {
    const s = new SanctionsScreen(shipped);
    const listed = firstLine('ETH');
    s.replace({ source: 'test', listDate: '2030-01-01', lists: [{ name: 'ETH', addresses: ['0x000000000000000000000000000000000000dEaD'] }] });
    expect(s.screen(listed).sanctioned).toBe(false);
    expect(s.screen('0x000000000000000000000000000000000000dead').sanctioned).toBe(true);
    expect(s.info()).toMatchObject({ source: 'test', listDate: '2030-01-01', addressCount: 1 });
  });
});

describe('reading list files', () => {
  test('one file takes its list name from the file name, or from --list', () => {
    const file = path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_TRX.txt');
    expect(readSanctionsFiles(file, { listDate: '2025-01-02' })).toMatchObject({ listDate: '2025-01-02', lists: [{ name: 'TRX' }] });
    expect(() => readSanctionsFiles(path.join(shippedSanctionsDirectory(), 'SOURCE.md'))).toThrow(/--list/);
  });
});
