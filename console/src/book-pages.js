// The order-book host's pages: markets with live depth and candle charts and recent trades, and the
// caller's orders with cancel; live through the order-book host's graphql-ws subscriptions.
import { useEffect, useState } from 'preact/hooks';
import { currentToken, gql } from './api.js';
import { subscribe } from './live.js';
import { html, useQuery, useAction, ErrorNote, Field, formValues, when, short, Table } from './ui.js';
import { DepthChart, CandleChart } from './charts.js';

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

const bySequenceDesc = (a, b) => (BigInt(b.sequence) > BigInt(a.sequence) ? 1 : BigInt(b.sequence) < BigInt(a.sequence) ? -1 : 0);

/** Trades by id, newest (highest market sequence) first, the 20 latest. */
function mergeTrades(list, more) {
  const byId = new Map(list.map((t) => [t.id, t]));
  for (const t of more) byId.set(t.id, t);
  return [...byId.values()].sort(bySequenceDesc).slice(0, 20);
}

/** Candles by start time; of two versions of one candle the one with more volume is the later (volume only grows). */
function mergeCandles(list, more) {
  const byTime = new Map(list.map((c) => [c.time, c]));
  for (const c of more) {
    const had = byTime.get(c.time);
    if (!had || Number(c.volume) >= Number(had.volume)) byTime.set(c.time, c);
  }
  return [...byTime.values()].sort((a, b) => Date.parse(a.time) - Date.parse(b.time)).slice(-60);
}

/** Applies a book message: a SNAPSHOT replaces, an UPDATE changes levels (quantity 0 removes one). */
function applyBook(book, m) {
  if (m.kind === 'SNAPSHOT') return { sequence: m.sequence, bids: m.bids, asks: m.asks };
  const side = (levels, changes, best) => {
    const byPrice = new Map(levels.map((l) => [l.price, l]));
    for (const l of changes) (l.orders === 0 ? byPrice.delete(l.price) : byPrice.set(l.price, l));
    return [...byPrice.values()].sort((a, b) => best * (Number(b.price) - Number(a.price)));
  };
  return { sequence: m.sequence, bids: side(book.bids, m.bids, 1), asks: side(book.asks, m.asks, -1) };
}

const LEVEL = 'price quantity orders';
const TRADE = 'id sequence price quantity takerSide createdAt';
const CANDLE = 'time open high low close volume';
const TICKER = 'last bestBid bestAsk change24h volume24h trades24h';

/**
 * One market, live: the queries once for history (recent trades, candles), then the order-book
 * host's subscriptions: orderBook (SNAPSHOT, then UPDATEs in book-sequence order; a gap
 * resubscribes for a new SNAPSHOT), trades, ticker and candles of the chosen interval.
 */
function MarketView({ market }) {
  const symbol = market.symbol;
  const [interval, setCandleInterval] = useState('1m');
  const [book, setBook] = useState(null);
  const [trades, setTrades] = useState([]);
  const [candles, setCandles] = useState([]);
  const [ticker, setTicker] = useState(null);
  const [bookEpoch, setBookEpoch] = useState(0);
  const [liveError, setLiveError] = useState(null);
  const history = useQuery(
    `query History($symbol: String!, $interval: String!) {
      marketTrades(symbol: $symbol, limit: 20, offset: 0) { items { ${TRADE} } }
      candles(symbol: $symbol, interval: $interval, count: 60) { ${CANDLE} }
    }`,
    { symbol, interval },
  );
  useEffect(() => {
    if (!history.data) return;
    setTrades((t) => mergeTrades(t, history.data.marketTrades.items));
    setCandles((c) => mergeCandles(c, history.data.candles));
  }, [history.data]);

  const token = currentToken();
  useEffect(() => {
    let held = null;
    return subscribe(token, `subscription Book($symbol: String!) { orderBook(symbol: $symbol) { kind sequence bids { ${LEVEL} } asks { ${LEVEL} } } }`, { symbol }, ({ orderBook: m }) => {
      if (m.kind === 'UPDATE' && (!held || BigInt(m.sequence) !== BigInt(held.sequence) + 1n)) {
        setBookEpoch((e) => e + 1); // a missed message: start again from a new snapshot
        return;
      }
      held = applyBook(held, m);
      setBook(held);
    }, (e) => setLiveError(e.message));
  }, [token, symbol, bookEpoch]);
  useEffect(() => subscribe(token, `subscription Trades($symbol: String!) { trades(symbol: $symbol) { ${TRADE} } }`, { symbol }, ({ trades: t }) => setTrades((list) => mergeTrades(list, [t])), (e) => setLiveError(e.message)), [token, symbol]);
  useEffect(() => subscribe(token, `subscription Ticker($symbol: String!) { ticker(symbol: $symbol) { ${TICKER} } }`, { symbol }, ({ ticker: t }) => setTicker(t), (e) => setLiveError(e.message)), [token, symbol]);
  useEffect(() => {
    setCandles([]);
    return subscribe(token, `subscription Candles($symbol: String!, $interval: String!) { candles(symbol: $symbol, interval: $interval) { ${CANDLE} } }`, { symbol, interval }, ({ candles: c }) => setCandles((list) => mergeCandles(list, [c])), (e) => setLiveError(e.message));
  }, [token, symbol, interval]);

  return html`<section class="detail" aria-labelledby="market-title">
    <h3 id="market-title">${symbol}</h3>
    <${ErrorNote} error=${history.error || liveError} />
    ${ticker && html`<dl class="facts">
      <div><dt>Last</dt><dd data-testid="last-price">${ticker.last ?? '—'}</dd></div>
      <div><dt>Best bid</dt><dd>${ticker.bestBid ?? '—'}</dd></div>
      <div><dt>Best ask</dt><dd>${ticker.bestAsk ?? '—'}</dd></div>
      <div><dt>24h volume</dt><dd>${ticker.volume24h} ${market.baseSymbol}</dd></div>
      <div><dt>24h trades</dt><dd>${ticker.trades24h}</dd></div>
    </dl>`}
    <${Field} id="candle-interval" label="Candle interval">
      <select id="candle-interval" value=${interval} onChange=${(e) => setCandleInterval(e.currentTarget.value)}>${INTERVALS.map((i) => html`<option>${i}</option>`)}</select>
    <//>
    ${book && history.data && html`<div class="charts">
      <${DepthChart} symbol=${symbol} book=${book} />
      <${CandleChart} key=${interval} symbol=${symbol} interval=${interval} candles=${candles} />
    </div>`}
    <${Table} caption="Recent trades" empty="No trades yet" rows=${trades} rowAttrs=${(t) => ({ 'data-trade-id': t.id })} columns=${[
      { label: 'Time', render: (t) => when(t.createdAt) },
      { label: 'Price', key: 'price' },
      { label: 'Quantity', key: 'quantity' },
      { label: 'Taker', render: (t) => html`<span class=${t.takerSide === 'BUY' ? 'buy' : 'sell'}>${t.takerSide}</span>` },
    ]} />
  </section>`;
}

const LIVE_STATUSES = new Set(['OPEN', 'PARTIALLY_FILLED']);

const ORDER = 'id market side type price quantity filledQuantity status createdAt updatedAt walletId clientOrderId';

/** Orders by id, each in its latest state (by updatedAt), newest first. */
function mergeOrders(list, more) {
  const byId = new Map(list.map((o) => [o.id, o]));
  for (const o of more) {
    const had = byId.get(o.id);
    if (!had || Date.parse(o.updatedAt) >= Date.parse(had.updatedAt)) byId.set(o.id, o);
  }
  return [...byId.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)).slice(0, 50);
}

/** The organisation's orders: the query once, then the `orders` subscription (every state a commit leaves an order in). */
export function OrdersPage() {
  const orders = useQuery(`query MyOrders { orders(limit: 50, offset: 0) { items { ${ORDER} } } }`, {});
  const [list, setList] = useState([]);
  const [liveError, setLiveError] = useState(null);
  useEffect(() => {
    if (orders.data) setList((l) => mergeOrders(l, orders.data.orders.items));
  }, [orders.data]);
  const token = currentToken();
  useEffect(() => subscribe(token, `subscription MyOrderUpdates { orders { ${ORDER} } }`, {}, ({ orders: o }) => setList((l) => mergeOrders(l, [o])), (e) => setLiveError(e.message)), [token]);
  const action = useAction();
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
    <${ErrorNote} error=${orders.error || liveError || action.error} />
    <${Table} caption="Orders of this organisation" empty="No orders yet" rows=${list} rowAttrs=${(o) => ({ 'data-order-id': o.id })} columns=${[
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
