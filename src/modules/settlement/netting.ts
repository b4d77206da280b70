import { parseUnits } from '../../platform/decimal';

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
  if (v === null) throw new Error(`netting: '${text}' is not an amount with at most ${decimals} decimals`);
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
