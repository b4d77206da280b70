import { clientKey, parseTrustProxy } from '../../../src/platform/client-address';
import { loadConfig } from '../../../src/platform/config';

describe('clientKey: the key a public client is budgeted under', () => {
  test('an IPv4 address is its own key', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('203.0.113.8')).toBe('203.0.113.8');
  });

  test('an IPv4-mapped IPv6 address counts as its IPv4 address', () => {
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  test('IPv6 addresses of one /64 share a key, however they are written', () => {
    const key = clientKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(key);
    expect(clientKey('2001:0DB8:0001:0002:0:0:0:99')).toBe(key);
  });

  test('another /64, even the next one, is another key', () => {
    expect(clientKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });

  test('IPv6 loopback is a /64 like any other; text that is no address is kept as it is', () => {
    expect(clientKey('::1')).toBe('::/64');
    expect(clientKey('127.0.0.1')).toBe('127.0.0.1');
    expect(clientKey('unknown')).toBe('unknown');
  });
});

describe('TRUST_PROXY', () => {
  test('off unless set', () => {
    expect(parseTrustProxy('')).toBe(false);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('off')).toBe(false);
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
  });

  test('names proxies by address, CIDR range or range name', () => {
    expect(parseTrustProxy('10.0.0.5, 192.168.0.0/16,fd00::/8, loopback')).toEqual(['10.0.0.5', '192.168.0.0/16', 'fd00::/8', 'loopback']);
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1' }).TRUST_PROXY).toEqual(['127.0.0.1']);
  });

  test('refuses what would trust any client, and what is not an address', () => {
    expect(() => parseTrustProxy('true')).toThrow(/name the proxies/);
    expect(() => parseTrustProxy('1')).toThrow(/hop count/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow(/'10.0.0.0\/33' is not an IP address/);
    expect(() => parseTrustProxy('proxy.internal')).toThrow(/not an IP address/);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY: name the proxies/);
  });
});
