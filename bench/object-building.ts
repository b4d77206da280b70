import { snakeCaseMappers } from 'objection';
import { rowsOf } from '../src/platform/db/one-statement';
import { median } from './support';

/**
 * What building a commit's rows costs on this Node version, per row of a new order (25 columns,
 * two timestamps), in nanoseconds, medians of `runs` runs of `rounds` × 40 rows:
 * - `spreadThenAdd`: `{ ...row, ...state, lockAssetId, createdAt }`, the shape the placement path
 *   used (on Node 20's V8 every such object gets hidden classes of its own);
 * - `objectAssign`: the same object through `Object.assign`, as the placement path builds it now;
 * - `rowsOf`: the jsonb text the commit binds (columns mapped once per name, each Date converted
 *   once per group);
 * - `mapThenStringify`: the same text made the way rowsOf made it before, each row's keys mapped by
 *   the ORM's mapper and JSON.stringify converting every Date.
 */
export async function run(args: string[]): Promise<object> {
  const rounds = Number(args[0] ?? 5000);
  const runs = Number(args[1] ?? 5);
  const now = new Date();
  const row = (i: number) => ({
    id: `a6b1c6c2-3b6c-4d7e-9f10-1a2b3c4d5e${String(i).padStart(2, '0')}`,
    organizationId: 'b6b1c6c2-3b6c-4d7e-9f10-1a2b3c4d5e6f',
    marketId: 'c6b1c6c2-3b6c-4d7e-9f10-1a2b3c4d5e6f',
    walletId: 'd6b1c6c2-3b6c-4d7e-9f10-1a2b3c4d5e6f',
    clientOrderId: null,
    side: 'BUY',
    type: 'LIMIT',
    timeInForce: 'GTC',
    postOnly: false,
    price: '1999.5',
    quantity: '0.01',
    priceTicks: '199950',
    quantityLots: '10',
    sequence: String(12345 + i),
  });
  const state = () => ({ remainingLots: '10', filledLots: '0', filledNotional: '0', feesPaid: '0', status: 'OPEN', statusReason: null, lockedAmount: '1999500', restSequence: '5', updatedAt: now });
  const sources = Array.from({ length: 40 }, (_, i) => row(i));
  const rows = sources.map((r) => Object.assign({}, r, state(), { lockAssetId: 'e6b1c6c2-3b6c-4d7e-9f10-1a2b3c4d5e6f', createdAt: now }));
  const toColumns = snakeCaseMappers().format;
  let sink = 0;
  const cases: Record<string, () => void> = {
    spreadThenAdd: () => {
      for (const r of sources) sink += Object.keys({ ...r, ...state(), lockAssetId: 'x', createdAt: now }).length;
    },
    objectAssign: () => {
      for (const r of sources) sink += Object.keys(Object.assign({}, r, state(), { lockAssetId: 'x', createdAt: now })).length;
    },
    rowsOf: () => {
      sink += rowsOf('orders', rows).bindings[0].length;
    },
    mapThenStringify: () => {
      sink += JSON.stringify(rows.map((r) => toColumns(r))).length;
    },
  };
  if (JSON.stringify(rows.map((r) => toColumns(r))) !== rowsOf('orders', rows).bindings[0]) throw new Error('rowsOf and the ORM mapping disagree');
  const results: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let run = 0; run <= runs; run++) {
    for (const [name, f] of Object.entries(cases)) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < rounds; i++) f();
      const ns = Number(process.hrtime.bigint() - started) / rounds / sources.length;
      if (run > 0) results[name].push(Math.round(ns)); // the first run warms up
    }
  }
  return {
    benchmark: 'object-building',
    node: process.version,
    rowsPerRound: sources.length,
    rounds,
    nanosecondsPerRow: Object.fromEntries(Object.entries(results).map(([name, r]) => [name, { median: median(r), runs: r }])),
    checksum: sink > 0,
  };
}
