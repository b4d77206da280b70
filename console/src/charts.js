// Charts on uPlot (canvas): the order book's depth and the market's candles.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import { html } from './ui.js';

const BID = '#17663a';
const ASK = '#a3122b';

function useChart(makeOpts, data) {
  const box = useRef(null);
  const chart = useRef(null);
  useEffect(() => {
    const el = box.current;
    const width = () => Math.max(240, el.clientWidth || 320);
    chart.current = new uPlot(makeOpts(width()), data, el);
    const ro = new ResizeObserver(() => chart.current?.setSize({ width: width(), height: 240 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);
  useEffect(() => {
    chart.current?.setData(data, true);
  }, [data]);
  return box;
}

/** Cumulative depth per price: bids from the best bid down, asks from the best ask up. */
export function depthSeries(book) {
  const bids = [...book.bids].map((l) => [Number(l.price), Number(l.quantity)]).sort((a, b) => b[0] - a[0]);
  const asks = [...book.asks].map((l) => [Number(l.price), Number(l.quantity)]).sort((a, b) => a[0] - b[0]);
  const points = new Map();
  // Each side's steps run on past its last level (2% of the mid price), so one level still draws an area.
  const mid = bids.length && asks.length ? (bids[0][0] + asks[0][0]) / 2 : (bids[0] ?? asks[0])?.[0] ?? 0;
  let sum = 0;
  for (const [p, q] of bids) points.set(p, [(sum += q), null]);
  if (bids.length) points.set(bids[bids.length - 1][0] - mid * 0.02, [sum, null]);
  sum = 0;
  for (const [p, q] of asks) points.set(p, [points.get(p)?.[0] ?? null, (sum += q)]);
  if (asks.length) points.set(asks[asks.length - 1][0] + mid * 0.02, [null, sum]);
  const xs = [...points.keys()].sort((a, b) => a - b);
  return [xs, xs.map((x) => points.get(x)[0]), xs.map((x) => points.get(x)[1])];
}

export function DepthChart({ symbol, book }) {
  const data = depthSeries(book);
  const box = useChart(
    (width) => ({
      width,
      height: 240,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: false, range: (_u, min, max) => padRange(min, max) }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{ label: 'Price' }, { label: 'Cumulative quantity' }],
      series: [{}, { label: 'Bids', stroke: BID, fill: 'rgba(23,102,58,0.15)', paths: uPlot.paths.stepped({ align: -1 }) }, { label: 'Asks', stroke: ASK, fill: 'rgba(163,18,43,0.15)', paths: uPlot.paths.stepped({ align: 1 }) }],
    }),
    data,
  );
  const summary = `Depth of ${symbol}: ${book.bids.length} bid levels, ${book.asks.length} ask levels`;
  return html`<figure class="chart">
    <figcaption>Depth</figcaption>
    <div ref=${box} role="img" aria-label=${summary} data-testid="depth-chart" data-bids=${book.bids.length} data-asks=${book.asks.length} data-sequence=${book.sequence}></div>
  </figure>`;
}

function drawCandles(u) {
  const [ts, open, high, low, close] = u.data;
  const { ctx } = u;
  const step = ts.length > 1 ? Math.abs(u.valToPos(ts[1], 'x', true) - u.valToPos(ts[0], 'x', true)) : 20;
  const half = Math.max(2, Math.min(12, step * 0.35));
  ctx.save();
  for (let i = 0; i < ts.length; i++) {
    if (open[i] == null) continue;
    const x = u.valToPos(ts[i], 'x', true);
    const y = (v) => u.valToPos(v, 'y', true);
    const up = close[i] >= open[i];
    ctx.strokeStyle = ctx.fillStyle = up ? BID : ASK;
    ctx.lineWidth = Math.max(1, devicePixelRatio);
    ctx.beginPath();
    ctx.moveTo(x, y(high[i]));
    ctx.lineTo(x, y(low[i]));
    ctx.stroke();
    const top = y(Math.max(open[i], close[i]));
    ctx.fillRect(x - half, top, half * 2, Math.max(1, y(Math.min(open[i], close[i])) - top));
  }
  ctx.restore();
}

const hidden = { paths: () => null, points: { show: false } };

const INTERVAL_SECONDS = { '1m': 60, '5m': 300, '15m': 900, '1h': 3600, '4h': 14400, '1d': 86400 };

/** The last 40 intervals up to the latest candle (or now): a lone candle is not stretched over years. */
function timeWindow(times, step) {
  const end = Math.max(times.length ? times[times.length - 1] : 0, Math.floor(Date.now() / 1000 / step) * step) + step;
  return [end - 40 * step, end];
}

/** A range around [min, max] with some air, also when they are equal or missing. */
function padRange(min, max) {
  if (min == null || max == null) return [0, 1];
  const pad = Math.max((max - min) * 0.1, Math.abs(max) * 0.02, 1e-9);
  return [min - pad, max + pad];
}

export function CandleChart({ symbol, interval, candles }) {
  const data = [candles.map((c) => Date.parse(c.time) / 1000), ...['open', 'high', 'low', 'close'].map((k) => candles.map((c) => Number(c[k])))];
  const box = useChart(
    (width) => ({
      width,
      height: 240,
      legend: { show: false },
      cursor: { show: false },
      axes: [{}, { label: 'Price' }],
      scales: { x: { range: (u) => timeWindow(u.data[0], INTERVAL_SECONDS[interval] ?? 60) }, y: { range: (_u, min, max) => padRange(min, max) } },
      series: [{}, { label: 'Open', ...hidden }, { label: 'High', ...hidden }, { label: 'Low', ...hidden }, { label: 'Close', ...hidden }],
      hooks: { draw: [drawCandles] },
    }),
    data,
  );
  const last = candles[candles.length - 1];
  const volume = candles.reduce((s, c) => s + Number(c.volume), 0);
  const summary = last ? `${interval} candles of ${symbol}: ${candles.length}, last close ${last.close}` : `No ${interval} candles of ${symbol} yet`;
  return html`<figure class="chart">
    <figcaption>Candles (${interval})</figcaption>
    <div ref=${box} role="img" aria-label=${summary} data-testid="candle-chart" data-candles=${candles.length} data-last-close=${last?.close ?? ''} data-volume=${String(Number(volume.toFixed(12)))}></div>
  </figure>`;
}
