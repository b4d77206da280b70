import { ApiClient } from '../../support/api-client';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually, WebhookReceiver } from '../../support/webhook-receiver';

/** Fast loops: blocks every second on the shared dev chains, 2 confirmations there, 3 for a payment. */
export const PAYMENT_CONFIG = {
  RATE_LIMIT_SCALE: 100,
  CHAIN_POLL_INTERVAL_MS: 100,
  CHECKOUT_POLL_INTERVAL_MS: 100,
  TRANSFER_POLL_INTERVAL_MS: 100,
  OUTBOX_POLL_INTERVAL_MS: 20,
  PAYMENT_CONFIRMATIONS: 3,
  WEBHOOKS_ALLOW_PRIVATE_URLS: true,
  CHECKOUT_RATE_LIMIT_PER_MINUTE: 10_000,
  CHECKOUT_LINK_SESSIONS_PER_MINUTE: 10_000,
  CHECKOUT_CLIENT_LINK_SESSIONS_PER_MINUTE: 10_000,
  CHECKOUT_SESSION_READS_PER_MINUTE: 10_000,
} as const;

export interface Merchant {
  org: TestOrg;
  wallet: { id: string; walletAddress: string; blockchainId: string; name: string };
  usdc: { id: string; address: string; decimals: number };
}

/** An organisation with a master wallet on the first dev chain, holding ETH for the settlement sweeps' gas. */
export async function merchant(t: TestKeel, org?: TestOrg): Promise<Merchant> {
  org ??= await t.createOrg();
  const blockchainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
  const created = await org.core.post('/v1/master-wallets', { blockchainId, name: 'Shop treasury' });
  expect(created.status).toBe(201);
  const wallet = created.body.data;
  const funded = await org.core.post('/v1/dev/faucet', { blockchainId, address: wallet.walletAddress, amount: '5' });
  expect(funded.status).toBe(200);
  const usdc = (await org.core.get(`/v1/assets?blockchainId=${blockchainId}&symbol=USDC`)).body.data[0];
  return { org, wallet: { ...wallet, blockchainId }, usdc };
}

/** A public client: no API key, no organisation. */
export function publicClient(t: TestKeel): ApiClient {
  return new ApiClient(t.coreUrl, {});
}

/** Pays `amount` of `asset` to `to` from the dev chain's funded account (the dev faucet). */
export async function pay(m: Merchant, to: string, amount: string, asset = 'USDC'): Promise<string> {
  const res = await m.org.core.post('/v1/dev/faucet', { blockchainId: m.wallet.blockchainId, address: to, asset, amount });
  // The failure says why the faucet refused the transfer.
  if (res.status !== 200) throw new Error(`the faucet answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.txHash;
}

export async function subscribe(m: Merchant, url: string, eventTypes: string[]): Promise<void> {
  const res = await m.org.core.post('/v1/webhooks', { url, name: 'payments', eventTypes });
  expect(res.status).toBe(201);
}

/** The events a receiver got, parsed, in arrival order. */
export function received(r: WebhookReceiver): { id: string; type: string; data: any }[] {
  return r.requests.map((q) => JSON.parse(q.body));
}

/** A session as the public API returns it: read under its link's slug. */
export interface SessionRef {
  id: string;
  link: { slug: string };
}

export function sessionPath(session: SessionRef): string {
  return `/v1/checkout/links/${session.link.slug}/sessions/${session.id}`;
}

export async function sessionReaches(client: ApiClient, session: SessionRef, status: string, timeoutMs = 30_000): Promise<any> {
  return eventually(async () => {
    const res = await client.get(sessionPath(session));
    return res.body.data?.status === status && res.body.data;
  }, timeoutMs, 100);
}

export interface PaymentWorld {
  t: TestKeel;
  /** The merchant whose events `hooks` receives. */
  m: Merchant;
  /** Another organisation, for cross-organisation checks. */
  other: Merchant;
  hooks: WebhookReceiver;
}

/** A Keel for the describe block: two merchants, the first subscribed to `eventTypes` at a receiver. */
export function paymentWorld(eventTypes: string[]): PaymentWorld {
  const world = { hooks: new WebhookReceiver() } as PaymentWorld;
  beforeAll(async () => {
    world.t = await startTestKeel(PAYMENT_CONFIG);
    [world.m, world.other] = await Promise.all([merchant(world.t), merchant(world.t)]);
    await subscribe(world.m, await world.hooks.start(), eventTypes);
  });
  afterAll(async () => {
    await world.hooks.stop();
    await world.t?.stop();
  });
  return world;
}

export { eventually, WebhookReceiver, startTestKeel };
export type { TestKeel, TestOrg };
