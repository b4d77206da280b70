import type { ChildProcess } from 'node:child_process';
import { ApiClient } from '../support/api-client';
import { startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { BookKeel, BookOrg, expectMarketRecord, units } from '../integration/orderbook/support';
import type { CreateMarketInput } from '../../src/modules/markets/market.types';

/**
 * kill -9 during continuous order flow: an order-book node (a child process) takes crossing limit
 * orders from concurrent clients of two organisations and is killed with SIGKILL at a random
 * moment, then started again on the same database. Whatever the moment:
 * - every order answered 2xx is in the record exactly once, by id and by clientOrderId;
 * - an order that got no answer is never recorded twice (sending it again after the restart gets
 *   201 if it was lost, or 409 DUPLICATE_ENTRY if it had been committed);
 * - the market's sequence numbers are gapless: each number up to the stored market sequence is
 *   exactly one event of the record, and no two stored events share one;
 * - the ledger conserves every asset and the locks are exactly what the open orders hold.
 */
const ROUNDS = 3;
const CLIENTS_PER_ORG = 2;
const SYMBOL = 'ETH-USDC';
// The same node id after the restart: the restarted node takes back its own shard leases at once.
const NODE_ENV = { RATE_LIMIT_SCALE: '1000', KEEL_NODE_ID: 'flow-node' };
/** Orders answered in a round before the kill is armed, so the node is killed in the middle of the flow. */
const ANSWERED_BEFORE_KILL = 20;

interface Sent {
  org: BookOrg;
  body: Record<string, unknown>;
  clientOrderId: string;
  /** The order id when answered 2xx; undefined when answered otherwise or not at all. */
  id?: string;
  answered: boolean;
}

let k: BookKeel;
let node: ChildProcess | undefined;
let proUrl = '';
const traders: { org: BookOrg; walletId: string }[] = [];
const sent: Sent[] = [];
let marketId: string;

async function startNode(): Promise<void> {
  const started = await startKeelProcess(k.config, 'orderbook', NODE_ENV);
  node = started.child;
  proUrl = started.proUrl!;
}

beforeAll(async () => {
  // In process: the core host (wallets) and the services the checks read through; the order book runs only in the child.
  k = await BookKeel.start({ KEEL_ROLES: 'api' });
  const { ETH, USDC } = await k.assets();
  const market = await k.services.markets.create({ symbol: SYMBOL, baseAssetId: ETH.id, quoteAssetId: USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '0', makerFee: '0.001', takerFee: '0.002' } as CreateMarketInput);
  marketId = market.id;
  for (const org of [await k.createOrg(), await k.createOrg()]) {
    const walletId = await k.wallet(org);
    await k.credit(org, walletId, ETH.id, units('1000', ETH.decimals));
    await k.credit(org, walletId, USDC.id, units('10000000', USDC.decimals));
    traders.push({ org, walletId });
  }
  await startNode();
}, 60_000);

afterAll(async () => {
  if (node) await stopKeelProcess(node, 'SIGKILL');
  await k?.stop();
});

const clientOf = (org: BookOrg) => new ApiClient(proUrl, { apiKey: org.proKey!, orgId: org.orgId });

/** Sends an order and records what came back; false when no answer came (the node is gone). */
async function send(order: Sent, onAnswer: () => void = () => {}): Promise<boolean> {
  try {
    const res = await clientOf(order.org).post('/v1/orderbook/orders', order.body);
    order.answered = true;
    onAnswer();
    if (res.status >= 200 && res.status < 300) order.id = res.body.data.id;
    else if (!(res.status === 409 && res.body.error.code === 'DUPLICATE_ENTRY') && res.body.error?.code !== 'INSUFFICIENT_FUNDS') {
      throw new Error(`unexpected answer ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return true;
  } catch (e) {
    if ((e as Error).message.startsWith('unexpected answer')) throw e;
    return false;
  }
}

/** One client: crossing limit orders around 2000, one after another, until the node stops answering. */
async function flow(round: number, client: number, trader: { org: BookOrg; walletId: string }, onAnswer: () => void): Promise<void> {
  for (let i = 0; ; i++) {
    const side = Math.random() < 0.5 ? 'BUY' : 'SELL';
    const price = (2000 + (Math.floor(Math.random() * 11) - 5) / 100).toFixed(2);
    const quantity = (0.001 * (1 + Math.floor(Math.random() * 50))).toFixed(3);
    const clientOrderId = `r${round}-c${client}-${i}`;
    const order: Sent = { org: trader.org, clientOrderId, answered: false, body: { walletId: trader.walletId, market: SYMBOL, side, type: 'LIMIT', price, quantity, timeInForce: 'GTC', clientOrderId } };
    sent.push(order);
    if (!(await send(order, onAnswer))) return;
  }
}

async function checkRecord(): Promise<void> {
  await expectMarketRecord(k, marketId, sent.filter((s) => s.id).map((s) => ({ id: s.id!, clientOrderId: s.clientOrderId, orgId: s.org.orgId })));
}

describe('an order-book node killed with SIGKILL under continuous order flow', () => {
  for (let round = 1; round <= ROUNDS; round++) {
    it(`round ${round}: after the restart every answered order is recorded once and the books balance`, async () => {
      const before = sent.length;
      let answered = 0;
      let armed: () => void;
      const flowing = new Promise<void>((resolve) => (armed = resolve));
      const onAnswer = () => ++answered === ANSWERED_BEFORE_KILL && armed();
      const clients = traders.flatMap((t, o) => Array.from({ length: CLIENTS_PER_ORG }, (_, c) => flow(round, o * CLIENTS_PER_ORG + c, t, onAnswer)));
      const ended = Promise.all(clients);
      await Promise.race([flowing, ended]);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 2000)));
      node!.kill('SIGKILL');
      await ended;
      node = undefined;
      expect(answered).toBeGreaterThanOrEqual(ANSWERED_BEFORE_KILL);
      const unanswered = sent.slice(before).filter((s) => !s.answered);

      await startNode();
      // The lost answers, sent again with the same clientOrderId: recorded once either way.
      for (const order of unanswered) expect(await send(order)).toBe(true);
      await checkRecord();

      // The restarted node's book is the record's open orders, and it still matches.
      const book = (await clientOf(traders[0].org).get(`/v1/orderbook/markets/${SYMBOL}/book?levels=500`)).body.data;
      const open = await k.db('orders').where({ marketId }).whereIn('status', ['OPEN', 'PARTIALLY_FILLED']).count({ n: '*' }).first();
      const levels = [...book.bids, ...book.asks] as { orders: number }[];
      expect(levels.reduce((n, l) => n + l.orders, 0)).toBe(Number(open!.n));
      if (book.bids.length && book.asks.length) expect(Number(book.bids[0].price)).toBeLessThan(Number(book.asks[0].price));
    }, 60_000);
  }
});
