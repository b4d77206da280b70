/**
 * The order book's realtime channels, as an access token names them: a market's public feeds
 * (`book:ETH-USDC`, `trades:…`, `ticker:…`, `candles:…`) and the caller's private ones (`orders`,
 * `fills`, `balances`, `settlement`). Each needs a permission the token must carry. Every
 * subscription of the order-book host is under one of them.
 */
export const MARKET_CHANNEL_KINDS = ['book', 'trades', 'ticker', 'candles'] as const;

/** Public feeds need the market-data permission. */
const PUBLIC_PERMISSION = 'orderbook_market:read';
const PRIVATE_PERMISSION = 'orderbook_order:read';

/** The caller's own feeds and what each needs: its orders, fills and balances order reading, its settlement batches settlement reading. */
const PRIVATE_CHANNEL_PERMISSIONS = { orders: PRIVATE_PERMISSION, fills: PRIVATE_PERMISSION, balances: PRIVATE_PERMISSION, settlement: 'orderbook_settlement:read' } as const;
type PrivateChannelName = keyof typeof PRIVATE_CHANNEL_PERMISSIONS;
export const PRIVATE_CHANNELS = Object.keys(PRIVATE_CHANNEL_PERMISSIONS) as PrivateChannelName[];

const MARKET_CHANNEL = new RegExp(`^(${MARKET_CHANNEL_KINDS.join('|')}):([A-Za-z0-9]{1,16}-[A-Za-z0-9]{1,16})$`);

export type RealtimeChannel = { name: string; permission: string } & ({ kind: (typeof MARKET_CHANNEL_KINDS)[number]; market: string } | { kind: PrivateChannelName; market?: undefined });

/** The channel a name stands for, its market symbol in capitals; undefined when the name is no channel. */
export function parseRealtimeChannel(name: string): RealtimeChannel | undefined {
  if ((PRIVATE_CHANNELS as string[]).includes(name)) {
    const kind = name as PrivateChannelName;
    return { name, kind, permission: PRIVATE_CHANNEL_PERMISSIONS[kind] };
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
