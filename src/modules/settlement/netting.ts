import { exactInDecimals, parseUnits } from '../../platform/decimal';

/** A trade with what netting needs of its market's assets. */
export interface NettableTrade {
  id: string;
  makerWalletId: string;
  takerWalletId: string;
  takerSide: 'BUY' | 'SELL' | string;
  quantity: string;
  quoteAmount: string;
  makerFee: string;
  takerFee: string;
  base: { id: string; decimals: number };
  quote: { id: string; decimals: number };
}

/** A wallet's net change in one asset over a set of trades, base units. */
export interface WalletDelta {
  walletId: string;
  assetId: string;
  amount: bigint;
}

function units(text: string, decimals: number): bigint {
  const v = parseUnits(String(text), decimals);
  if (v === null) throw new Error(`netting: '${text}' ${exactInDecimals(decimals)}`);
  return v;
}

/**
 * What a set of trades does to each wallet, netted per wallet and asset, the same moves the order
 * book made in the ledger: the buyer receives the base and pays the notional plus its fee; the
 * seller gives the base and receives the notional less its fee. Per asset the deltas sum to minus
 * the fees (the fee recipient's share). Zero deltas are left out. The one place this rule is written:
 * batches settle by it and unsettled-trades.ts withholds by it.
 */
export function netTrades(trades: readonly NettableTrade[]): WalletDelta[] {
  const sums = new Map<string, WalletDelta>();
  const add = (walletId: string, assetId: string, amount: bigint) => {
    const key = `${walletId}|${assetId}`;
    const d = sums.get(key) ?? { walletId, assetId, amount: 0n };
    d.amount += amount;
    sums.set(key, d);
  };
  for (const t of trades) {
    const buyer = t.takerSide === 'BUY' ? t.takerWalletId : t.makerWalletId;
    const seller = t.takerSide === 'BUY' ? t.makerWalletId : t.takerWalletId;
    const buyerFee = units(t.takerSide === 'BUY' ? t.takerFee : t.makerFee, t.quote.decimals);
    const sellerFee = units(t.takerSide === 'BUY' ? t.makerFee : t.takerFee, t.quote.decimals);
    const base = units(t.quantity, t.base.decimals);
    const notional = units(t.quoteAmount, t.quote.decimals);
    add(buyer, t.base.id, base);
    add(buyer, t.quote.id, -(notional + buyerFee));
    add(seller, t.base.id, -base);
    add(seller, t.quote.id, notional - sellerFee);
  }
  return [...sums.values()].filter((d) => d.amount !== 0n);
}

/**
 * A wallet's change in one asset over trades the contract applies one after another: `net`, their
 * sum, and `lowest`, the lowest the running sum reaches on the way (0 at most: before the first
 * trade it is 0). Base units.
 */
export interface RunningDelta {
  walletId: string;
  assetId: string;
  net: bigint;
  lowest: bigint;
}

/**
 * Per wallet and asset, the running sum of what `trades` (in the order they settle, settlement_key)
 * do to it: batches settle in that order, so the contract must cover every prefix, not only the
 * net. A wallet that sells and then buys back nets to 0, yet the sale takes the asset out first.
 */
export function runningDeltas(trades: readonly NettableTrade[]): Map<string, RunningDelta> {
  const walks = new Map<string, RunningDelta>();
  for (const t of trades) {
    for (const d of netTrades([t])) {
      const key = `${d.walletId}|${d.assetId}`;
      const w = walks.get(key) ?? { walletId: d.walletId, assetId: d.assetId, net: 0n, lowest: 0n };
      w.net += d.amount;
      if (w.net < w.lowest) w.lowest = w.net;
      walks.set(key, w);
    }
  }
  return walks;
}

/**
 * What of a wallet's trading balance the contract must keep for these trades to settle: the
 * ledger counts `net` already, and at the worst point the trades take `lowest` (≤ 0) out of what
 * the contract holds. So of a ledger balance L (= contract + net), at most L − net + lowest may
 * leave: `net − lowest` is held back (never negative). Proceeds still to arrive (net > 0, no dip)
 * are held back whole; a sale bought back later (net 0, lowest −sold) holds back what was sold.
 */
export function heldBack(w: Pick<RunningDelta, 'net' | 'lowest'>): bigint {
  return w.net - w.lowest;
}

/**
 * What the contract must hold for a wallet with ledger balance `ledger` for these trades to settle:
 * what the ledger leaves once they have (ledger − net), and never less than what they take out at
 * their worst point (−lowest).
 */
export function contractMustHold(ledger: bigint, w: Pick<RunningDelta, 'net' | 'lowest'>): bigint {
  const after = ledger - w.net;
  return after > -w.lowest ? after : -w.lowest;
}
