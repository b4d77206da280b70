// The order-book host's pages: markets with live depth and candle charts and recent trades, and the
// caller's orders with cancel. Live by polling the public queries (orderBook, marketTrades, candles,
// orders) once a second.
import { useState } from 'preact/hooks';
import { gql } from './api.js';
import { html, useQuery, useAction, ErrorNote, Field, formValues, when, short, Table } from './ui.js';
import { DepthChart, CandleChart } from './charts.js';

export const LIVE_MS = 1000;
const INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'];

export function MarketsPage({ market, setMarket }) {
  const markets = useQuery('query Markets { markets(limit: 100, offset: 0) { items { id symbol baseSymbol quoteSymbol status tickSize lotSize minNotional makerFee takerFee } } }', {});
  const items = markets.data?.markets.items ?? [];
  const selected = items.find((m) => m.symbol === market) ?? items[0];
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">Markets</h2>
    <${ErrorNote} error=${markets.error} />
    <${Table} caption="Markets" rowKey=${(m) => m.symbol} rows=${items} rowAttrs=${(m) => ({ 'aria-current': selected?.symbol === m.symbol ? 'true' : undefined })} columns=${[
      { label: 'Market', key: 'symbol' },
      { label: 'Status', key: 'status' },
      { label: 'Tick', key: 'tickSize' },
      { label: 'Lot', key: 'lotSize' },
      { label: 'Fees (maker / taker)', render: (m) => `${m.makerFee} / ${m.takerFee}` },
      { label: 'Open', render: (m) => html`<button type="button" onClick=${() => setMarket(m.symbol)} aria-label=${`Open market ${m.symbol}`}>Open</button>` },
    ]} />
    ${selected && html`<${MarketView} key=${selected.symbol} market=${selected} />`}
  </section>`;
}

function MarketView({ market }) {
  const symbol = market.symbol;
  const [interval, setCandleInterval] = useState('1m');
  const live = useQuery(
    `query Live($symbol: String!, $interval: String!) {
      orderBook(symbol: $symbol, levels: 50) { sequence bids { price quantity orders } asks { price quantity orders } }
      marketTrades(symbol: $symbol, limit: 20, offset: 0) { items { id price quantity takerSide createdAt } }
      candles(symbol: $symbol, interval: $interval, count: 60) { time open high low close volume }
      ticker(symbol: $symbol) { last bestBid bestAsk change24h volume24h trades24h }
    }`,
    { symbol, interval },
    [],
    LIVE_MS,
  );
  const d = live.data;
  return html`<section class="detail" aria-labelledby="market-title">
    <h3 id="market-title">${symbol}</h3>
    <${ErrorNote} error=${live.error} />
    ${d && html`<dl class="facts" aria-live="off">
      <div><dt>Last</dt><dd data-testid="last-price">${d.ticker.last ?? '—'}</dd></div>
      <div><dt>Best bid</dt><dd>${d.ticker.bestBid ?? '—'}</dd></div>
      <div><dt>Best ask</dt><dd>${d.ticker.bestAsk ?? '—'}</dd></div>
      <div><dt>24h volume</dt><dd>${d.ticker.volume24h} ${market.baseSymbol}</dd></div>
      <div><dt>24h trades</dt><dd>${d.ticker.trades24h}</dd></div>
    </dl>`}
    <${Field} id="candle-interval" label="Candle interval">
      <select id="candle-interval" value=${interval} onChange=${(e) => setCandleInterval(e.currentTarget.value)}>${INTERVALS.map((i) => html`<option>${i}</option>`)}</select>
    <//>
    ${d && html`<div class="charts">
      <${DepthChart} symbol=${symbol} book=${d.orderBook} />
      <${CandleChart} key=${interval} symbol=${symbol} interval=${interval} candles=${d.candles} />
    </div>
    <${Table} caption="Recent trades" empty="No trades yet" rows=${d.marketTrades.items} rowAttrs=${(t) => ({ 'data-trade-id': t.id })} columns=${[
      { label: 'Time', render: (t) => when(t.createdAt) },
      { label: 'Price', key: 'price' },
      { label: 'Quantity', key: 'quantity' },
      { label: 'Taker', render: (t) => html`<span class=${t.takerSide === 'BUY' ? 'buy' : 'sell'}>${t.takerSide}</span>` },
    ]} />`}
  </section>`;
}

const LIVE_STATUSES = new Set(['OPEN', 'PARTIALLY_FILLED']);

export function OrdersPage() {
  const orders = useQuery('query MyOrders { orders(limit: 50, offset: 0) { items { id market side type price quantity filledQuantity status createdAt walletId clientOrderId } } }', {}, [], LIVE_MS);
  const action = useAction(() => orders.reload());
  const cancel = (o) => action.run(() => gql('mutation Cancel($id: ID!) { cancelOrder(id: $id) { id status } }', { id: o.id }));
  const place = (e) => {
    const v = formValues(e);
    action.run(() =>
      gql('mutation Place($input: PlaceOrderInput!) { placeOrder(input: $input) { id status } }', {
        input: { market: v.market, walletId: v.walletId, side: v.side, type: 'LIMIT', price: v.price, quantity: v.quantity },
      }),
    );
  };
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">My orders</h2>
    <${ErrorNote} error=${orders.error || action.error} />
    <${Table} caption="Orders of this organisation" empty="No orders yet" rows=${orders.data?.orders.items ?? []} rowAttrs=${(o) => ({ 'data-order-id': o.id })} columns=${[
      { label: 'Placed', render: (o) => when(o.createdAt) },
      { label: 'Market', key: 'market' },
      { label: 'Side', render: (o) => html`<span class=${o.side === 'BUY' ? 'buy' : 'sell'}>${o.side}</span>` },
      { label: 'Price', render: (o) => o.price ?? 'market' },
      { label: 'Quantity', key: 'quantity' },
      { label: 'Filled', key: 'filledQuantity' },
      { label: 'Status', key: 'status' },
      { label: 'Wallet', render: (o) => short(o.walletId) },
      { label: 'Cancel', render: (o) => (LIVE_STATUSES.has(o.status) ? html`<button type="button" class="danger" onClick=${() => cancel(o)} disabled=${action.busy} aria-label=${`Cancel order ${short(o.id)}`}>Cancel</button>` : '—') },
    ]} />
    <form class="card" onSubmit=${place} aria-labelledby="new-order">
      <h3 id="new-order">Place a limit order</h3>
      <${Field} id="order-market" label="Market"><input id="order-market" name="market" required placeholder="ETH-USDC" /><//>
      <${Field} id="order-wallet" label="Wallet id"><input id="order-wallet" name="walletId" required /><//>
      <${Field} id="order-side" label="Side"><select id="order-side" name="side"><option>BUY</option><option>SELL</option></select><//>
      <${Field} id="order-price" label="Price"><input id="order-price" name="price" required inputmode="decimal" /><//>
      <${Field} id="order-quantity" label="Quantity"><input id="order-quantity" name="quantity" required inputmode="decimal" /><//>
      <button type="submit" disabled=${action.busy}>Place order</button>
    </form>
  </section>`;
}
