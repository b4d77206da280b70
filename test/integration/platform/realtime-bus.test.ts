import { RealtimeBus } from '../../../src/platform/events/realtime-bus';
import { PrivateRedis } from '../../support/private-redis';

/** The realtime bus between nodes, on a Redis of the test's own (it is killed and started again). */
let redis: PrivateRedis;
let listening: RealtimeBus;
let publishing: RealtimeBus;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  listening = new RealtimeBus(redis.url, 'keel-test:realtime');
  publishing = new RealtimeBus(redis.url, 'keel-test:realtime');
});
afterAll(async () => {
  await listening.close();
  await publishing.close();
  await redis.kill();
});

async function until(done: () => boolean, what: string, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !done(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a node that loses Redis is told when it hears the bus again (what was published meanwhile never reached it), and hears what is published after', async () => {
  const heard: string[] = [];
  let resumed = 0;
  listening.onMessage((m) => heard.push(m));
  listening.onResumed(() => resumed++);
  await listening.ready();
  await until(() => (publishing.publish('before'), heard.includes('before')), 'the first message');
  expect(resumed).toBe(0);

  await redis.kill();
  publishing.publish('lost');
  await redis.restart();

  await until(() => resumed > 0, 'the bus to be heard again');
  expect(resumed).toBe(1);
  // Subscribed again before it was told: a message published now arrives.
  await until(() => (publishing.publish('after'), heard.includes('after')), 'a message after the outage');
  expect(heard).not.toContain('lost');
});
