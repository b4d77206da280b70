import { BookKeel, BookOrg, marketBody, units } from './support';

/**
 * The group commit writes each touched order's new state through keel_update_order_states
 * (migration 044): one UPDATE by primary key per row, so the plan a pooled connection keeps for it
 * stays an index lookup however the orders table grew after the plan was made (a set-based UPDATE
 * joined to the rows, planned while the table was small, read the whole table on every commit).
 */
let k: BookKeel;
let org: BookOrg;
let orderId: string;

beforeAll(async () => {
  k = await BookKeel.start();
  org = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  const wallet = await k.wallet(org);
  await k.credit(org, wallet, USDC.id, units('10000', USDC.decimals));
  const placed = await org.pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', timeInForce: 'GTC', walletId: wallet, side: 'BUY', price: '1900', quantity: '0.1' });
  expect(placed.status).toBe(201);
  orderId = placed.body.data.id;
});
afterAll(() => k?.stop());

test('each order is updated by its key, and still by its key after the table has grown under the cached plan', async () => {
  await k.db
    .transaction(async (trx) => {
      const seqScans = async () => Number((await trx.raw(`SELECT pg_stat_get_xact_numscans('orders'::regclass) AS n`)).rows[0].n);
      const update = async (reason: string) => {
        const { rows } = await trx.raw(`SELECT json_agg(json_populate_record(o, json_build_object('status_reason', ?::text))) AS changes FROM orders o WHERE o.id = ?`, [reason, orderId]);
        const result = await trx.raw('SELECT keel_update_order_states(?::json) AS n', [JSON.stringify(rows[0].changes)]);
        expect(result.rows[0].n).toBe(1);
      };
      // Planned on this connection while the table holds one order.
      for (let i = 0; i < 6; i++) await update(`small ${i}`);
      await trx.raw(
        `INSERT INTO orders SELECT (json_populate_record(o, json_build_object('id', gen_random_uuid(), 'status', 'CANCELLED', 'rest_sequence', NULL))).*
           FROM orders o, generate_series(1, 20000) WHERE o.id = ?`,
        [orderId],
      );
      const before = await seqScans();
      await update('grown');
      expect(await seqScans()).toBe(before);
      expect((await trx('orders').where({ id: orderId }).first()).statusReason).toBe('grown');
      throw new Error('rollback');
    })
    .catch((e: Error) => {
      if (e.message !== 'rollback') throw e;
    });
});
