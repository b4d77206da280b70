import { useTestKeel } from '../support/use-test-keel';
import { eventually, ReceivedRequest, WebhookReceiver } from '../support/webhook-receiver';
import { createCoreClient, CoreClient, unwrap, verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src';

/** Deliveries Keel makes to a loopback receiver, checked with the client's verifier. */
const { t, orgs: [org] } = useTestKeel({ WEBHOOKS_ALLOW_PRIVATE_URLS: true, OUTBOX_POLL_INTERVAL_MS: 20 }, { orgs: 1 });

const receiver = new WebhookReceiver();
let keel: CoreClient;
let subscription: { id: string; secret?: string | null };
let wallet: { id: string };
let delivery: ReceivedRequest;

/** The delivery of the event about the wallet named `name`. */
const deliveryNaming = (name: string) => eventually(() => receiver.requests.find((r) => r.body.includes(name)), 20_000);

beforeAll(async () => {
  keel = createCoreClient({ baseUrl: t.coreUrl, apiKey: org.adminKey, orgId: org.orgId });
  subscription = (await unwrap(keel.POST('/v1/webhooks', { body: { url: await receiver.start(), name: 'client test', eventTypes: ['master.*'] } }))).data;
  const chainId = (await unwrap(keel.GET('/v1/blockchains'))).data[0].id;
  wallet = (await unwrap(keel.POST('/v1/master-wallets', { body: { blockchainId: chainId, name: 'Webhook wallet one' } }))).data;
  delivery = await deliveryNaming('Webhook wallet one');
});
afterAll(() => receiver.stop());

test("a delivery Keel made verifies with the subscription's secret, and its event is returned", () => {
  const event = verifyWebhook<{ id: string }>(delivery.body, delivery.headers, subscription.secret!);
  expect(event).toMatchObject({ type: 'master.created', version: '1.0', data: { id: wallet.id } });
  expect(event.id).toBe(delivery.headers['webhook-id']);
});

test('a tampered body is refused', () => {
  const tampered = delivery.body.replace('Webhook wallet one', 'Webhook wallet two');
  expect(tampered).not.toBe(delivery.body);
  expect(() => verifyWebhook(tampered, delivery.headers, subscription.secret!)).toThrow(WebhookVerificationError);
});

test('a tampered webhook-id is refused: it is signed too', () => {
  expect(() => verifyWebhook(delivery.body, { ...delivery.headers, 'webhook-id': 'evt_other' }, subscription.secret!)).toThrow(WebhookVerificationError);
});

test('another secret does not verify it', () => {
  expect(() => verifyWebhook(delivery.body, delivery.headers, 'whsec_' + Buffer.alloc(32, 7).toString('base64'))).toThrow(WebhookVerificationError);
});

test('a delivery replayed later than the tolerance is refused; within it, it verifies', () => {
  const sentAt = Number(delivery.headers['webhook-timestamp']) * 1000;
  expect(() => verifyWebhook(delivery.body, delivery.headers, subscription.secret!, { toleranceSeconds: 60, now: () => sentAt + 61_000 })).toThrow(/more than 60 s/);
  expect(verifyWebhook(delivery.body, delivery.headers, subscription.secret!, { toleranceSeconds: 60, now: () => sentAt + 59_000 }).type).toBe('master.created');
});

test('after a secret rotation, a delivery verifies with the new secret and, during the grace period, with the old one', async () => {
  const rotated = (await unwrap(keel.POST('/v1/webhooks/{subscriptionId}/secret/rotate', { params: { path: { subscriptionId: subscription.id } }, body: {} }))).data as { secret?: string | null };
  expect(rotated.secret).toMatch(/^whsec_/);
  expect(rotated.secret).not.toBe(subscription.secret);
  const chainId = (await unwrap(keel.GET('/v1/blockchains'))).data[0].id;
  await unwrap(keel.POST('/v1/master-wallets', { body: { blockchainId: chainId, name: 'Webhook wallet three' } }));
  const later = await deliveryNaming('Webhook wallet three');
  expect(verifyWebhook(later.body, later.headers, rotated.secret!).type).toBe('master.created');
  expect(verifyWebhook(later.body, later.headers, subscription.secret!).type).toBe('master.created');
  // A receiver that holds both during the rotation passes both.
  expect(verifyWebhook(later.body, later.headers, [rotated.secret!, subscription.secret!]).type).toBe('master.created');
});
