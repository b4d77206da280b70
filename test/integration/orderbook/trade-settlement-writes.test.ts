import type { Knex } from 'knex';
import { batchTrades, setBatchTradesStatus } from '../../../src/modules/orders';
import { BookKeel, marketBody, units } from './support';

/**
 * Settlement moves each trade through its batch's statuses after the order book wrote it. No index
 * reads the status (migration 050), so a status change is an update in place, with no new index
 * entries (heap-only); the queue is the trades in no batch, which a trade is exactly while QUEUED.
 */
let k: BookKeel;
let tradeId: string;

beforeAll(async () => {
  k = await BookKeel.start();
  const org = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  const [seller, buyer] = [await k.wallet(org, 'Seller'), await k.wallet(org, 'Buyer')];
  await k.credit(org, seller, ETH.id, units('1', ETH.decimals));
  await k.credit(org, buyer, USDC.id, units('10000', USDC.decimals));
  const order = { market: 'ETH-USDC', type: 'LIMIT', timeInForce: 'GTC', price: '1900', quantity: '0.1' };
  expect((await org.pro().post('/v1/orderbook/orders', { ...order, walletId: seller, side: 'SELL' })).status).toBe(201);
  expect((await org.pro().post('/v1/orderbook/orders', { ...order, walletId: buyer, side: 'BUY' })).status).toBe(201);
  tradeId = (await k.db('trades').first()).id;
});
afterAll(() => k?.stop());

/** Runs `work` in a transaction that is rolled back, so each test starts from the trade as the order book wrote it. */
async function rolledBack(work: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
  await k.db
    .transaction(async (trx) => {
      await work(trx);
      throw new Error('rollback');
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e;
    });
}

test('a trade is QUEUED in no batch; settlement status changes after its batching are updates in place', async () => {
  expect(await k.db('trades').where({ id: tradeId }).first()).toMatchObject({ settlementStatus: 'QUEUED', settlementBatchId: null });
  await rolledBack(async (trx) => {
    const heapOnly = async () => Number((await trx.raw(`SELECT pg_stat_get_xact_tuples_hot_updated('trades'::regclass) AS n`)).rows[0].n);
    const batchId = (await trx.raw('SELECT gen_random_uuid() AS id')).rows[0].id;
    await batchTrades(trx, [tradeId], batchId);
    const afterBatching = await heapOnly();
    await setBatchTradesStatus(trx, batchId, 'SUBMITTED');
    await setBatchTradesStatus(trx, batchId, 'CONFIRMED');
    expect((await heapOnly()) - afterBatching).toBe(2);
    expect(await trx('trades').where({ id: tradeId }).first()).toMatchObject({ settlementStatus: 'CONFIRMED', settlementBatchId: batchId });
  });
});

test('a trade cannot be QUEUED in a batch, nor out of the queue without one', async () => {
  await rolledBack(async (trx) => {
    await expect(trx('trades').where({ id: tradeId }).update({ settlementBatchId: (await trx.raw('SELECT gen_random_uuid() AS id')).rows[0].id })).rejects.toThrow(/trades_queued_until_batched/);
  });
  await rolledBack(async (trx) => {
    await expect(trx('trades').where({ id: tradeId }).update({ settlementStatus: 'CONFIRMED' })).rejects.toThrow(/trades_queued_until_batched/);
  });
});
