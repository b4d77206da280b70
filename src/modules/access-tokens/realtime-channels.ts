/**
 * The order book's realtime channels, as an access token names them: a market's public feeds
 * (`book:ETH-USDC`, `trades:…`, `ticker:…`, `candles:…`) and the caller's private ones (`orders`,
 * `fills`, `balances`). Each needs a permission the token must carry.
 */
export const MARKET_CHANNEL_KINDS = ['book', 'trades', 'ticker', 'candles'] as const;
export const PRIVATE_CHANNELS = ['orders', 'fills', 'balances'] as const;

/** Public feeds need the market-data permission; the caller's own orders, fills and balances need order reading. */
const PUBLIC_PERMISSION = 'orderbook_market:read';
const PRIVATE_PERMISSION = 'orderbook_order:read';

const MARKET_CHANNEL = new RegExp(`^(${MARKET_CHANNEL_KINDS.join('|')}):([A-Za-z0-9]{1,16}-[A-Za-z0-9]{1,16})$`);

export type RealtimeChannel = { name: string; permission: string } & ({ kind: (typeof MARKET_CHANNEL_KINDS)[number]; market: string } | { kind: (typeof PRIVATE_CHANNELS)[number]; market?: undefined });

/** The channel a name stands for, its market symbol in capitals; undefined when the name is no channel. */
export function parseRealtimeChannel(name: string): RealtimeChannel | undefined {
  if ((PRIVATE_CHANNELS as readonly string[]).includes(name)) {
    return { name, kind: name as (typeof PRIVATE_CHANNELS)[number], permission: PRIVATE_PERMISSION };
  }
  const m = MARKET_CHANNEL.exec(name);
  if (!m) return undefined;
  const market = m[2].toUpperCase();
  return { name: `${m[1]}:${market}`, kind: m[1] as (typeof MARKET_CHANNEL_KINDS)[number], market, permission: PUBLIC_PERMISSION };
}

/**
 * The permissions a token narrowed to `names` needs and carries when its issuer names none: a token
 * for public market feeds reads no one's orders, fills or balances. Names that are no channel are
 * left to the caller to report.
 */
export function channelPermissions(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => parseRealtimeChannel(n)?.permission).filter((p): p is string => p !== undefined))];
}

/** The permissions a realtime token carries when its issuer names neither permissions nor channels: the reading ones its key holds. */
export const REALTIME_READ_PERMISSIONS = [PUBLIC_PERMISSION, PRIVATE_PERMISSION];

export const CHANNEL_FORMS = `${MARKET_CHANNEL_KINDS.map((k) => `${k}:<SYMBOL>`).join(', ')}, ${PRIVATE_CHANNELS.join(', ')}`;
