import { KeelError } from '../../platform/errors';

/** What a realtime subscriber may do: its organisation and the channels its credential was narrowed to. */
export interface ChannelAccess {
  organizationId: string;
  mayUseChannel(channel: string): boolean;
}

export type PublicChannelKind = 'book' | 'trades' | 'ticker' | 'candles';
export type PrivateChannel = 'orders' | 'fills' | 'balances';

/** The channel of the caller's settlement batches (the settlement module's `settlementBatchUpdates`). */
export const SETTLEMENT_CHANNEL = 'settlement';

/** The channel name of a market feed: `book:BTC-USDC`, `trades:…`, `ticker:…`, `candles:…` (symbol upper-case). */
export function marketChannel(kind: PublicChannelKind, symbol: string): string {
  return `${kind}:${symbol.toUpperCase()}`;
}

/** Refuses (403 FORBIDDEN) a channel the credential was not narrowed to. */
export function assertChannel(access: ChannelAccess, channel: string): void {
  if (!access.mayUseChannel(channel)) throw new KeelError('FORBIDDEN', `This credential is not authorised for channel '${channel}'`, { channel });
}
