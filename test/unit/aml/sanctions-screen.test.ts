import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAddress } from '@solana/kit';
import { SanctionsScreen } from '../../../src/modules/aml/sanctions-screen';
import { parseListFile, readSanctionsFiles, shippedSanctionsDirectory, shippedSanctionsSnapshot, shrunkLists } from '../../../src/modules/aml/sanctions-files';

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

  test("every line but blanks and comments is an address of the list's chain: a saved error page, an HTML page or a line cut short is refused, naming the file, the first such line and its number", () => {
    const evm = '0x8589427373D6D84E98730D7795D8f6f8731FDA16';
    expect(parseListFile(`# ETH\n\n${evm}\r\n${evm.toLowerCase()}\n`, 'ETH')).toEqual([evm, evm.toLowerCase()]);
    expect(() => parseListFile('404: Not Found', 'ETH')).toThrow('line 1 is not an address of the ETH list (EVM): "404: Not Found"');
    expect(() => parseListFile(`${evm}\n# fine\n0x8589427373D6D84E98730D`, 'ETH')).toThrow(/^line 3 is not an address of the ETH list \(EVM\): "0x8589427373D6D84E98730D"/);
    expect(() => parseListFile('<!DOCTYPE html>\n<html><body>Service Unavailable</body></html>', 'XBT')).toThrow(/^line 1 is not an address of the XBT list \(Base58, Bech32\): "<!DOCTYPE html>"/);
    // A Base58 address with a space in it, or one far too short, is no address of any chain.
    expect(() => parseListFile('12sjrrhoFEsedNRhtgwvvRqjFTh8fZTDX9\n12sjrrhoFEsed NRhtgwvvRqjFTh8fZTDX9', 'BSV')).toThrow(/^line 2 /);
    expect(() => parseListFile('12sjrrhoF', 'USDT')).toThrow(/^line 1 is not an address of the USDT list \(EVM, Base58, Bech32, CashAddr, hex-64\)/);
    // A token's list (and an operator's own) may hold addresses of several chains: EVM and Tron for USDT.
    expect(parseListFile(`${evm}\nTBHTJqAy4DhHhmT3dNceJYNRz4SdLofLre`, 'USDT')).toHaveLength(2);
    // The file is named in the error.
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-lists-'));
    writeFileSync(path.join(dir, 'sanctioned_addresses_ETH.txt'), '404: Not Found\n');
    expect(() => readSanctionsFiles(path.join(dir, 'sanctioned_addresses_ETH.txt'))).toThrow(/^sanctioned_addresses_ETH.txt: line 1 /);
    // The shipped snapshot passes, every list of it.
    expect(shippedSanctionsSnapshot().lists.length).toBeGreaterThan(10);
  });

  test('a list less than half its namesake in use has shrunk; a list not in use, or at least half of it, has not', () => {
    const list = (name: string, n: number) => ({ name, addresses: Array.from({ length: n }, (_, i) => `a${i}`) });
    const inUse = { source: 'in use', listDate: null, lists: [list('XBT', 435), list('DASH', 3)] };
    expect(shrunkLists({ source: 'new', listDate: null, lists: [list('XBT', 217), list('DASH', 2), list('SOL', 1)] }, inUse)).toEqual([{ name: 'XBT', entries: 217, inUse: 435 }]);
    expect(shrunkLists({ source: 'new', listDate: null, lists: [list('XBT', 218), list('DASH', 1)] }, inUse)).toEqual([{ name: 'DASH', entries: 1, inUse: 3 }]);
  });

  test('a directory load replaces every list: one in use whose file is missing (a download that never arrived) has shrunk to nothing; one file alone replaces only its list', () => {
    const list = (name: string, n: number) => ({ name, addresses: Array.from({ length: n }, (_, i) => `a${i}`) });
    const inUse = { source: 'in use', listDate: null, lists: [list('ETH', 152), list('XBT', 435)] };
    const onlyXbt = { source: 'new', listDate: null, lists: [list('XBT', 435)] };
    expect(shrunkLists(onlyXbt, inUse, true)).toEqual([{ name: 'ETH', entries: 0, inUse: 152 }]);
    expect(shrunkLists(onlyXbt, inUse)).toEqual([]);
  });
});
