import { randomBytes } from 'node:crypto';
import { useTestKeel } from '../../support/use-test-keel';
import { ApiClient } from '../../support/api-client';
import { WebhookReceiver, eventually } from '../../support/webhook-receiver';
import { keyId, SecretBox } from '../../../src/platform/crypto/secret-box';
import { sealWebhookSecrets } from '../../../src/platform/db/migrations/012_sealed_secret_versions';
import { keelSignature } from '../../../src/modules/webhooks/webhook-signing';
import { keelCommand } from '../../support/keel-cli';

const OLD_KEY = randomBytes(32).toString('hex');
const NEW_KEY = randomBytes(32).toString('hex');

const receiver = new WebhookReceiver();
let hookUrl: string;

// Jest runs afterAll hooks in the order they are added: the Keel stops before the receiver.
const { t, orgs: [org] } = useTestKeel({ KEEL_MASTER_KEY: OLD_KEY, WEBHOOKS_ALLOW_PRIVATE_URLS: true, OUTBOX_POLL_INTERVAL_MS: 20 }, { orgs: 1 });
beforeAll(async () => {
  hookUrl = await receiver.start();
});
afterAll(() => receiver.stop());

const db = () => t.keel.platform.db;

/** A webhook subscription as it was stored before 012: its secret in plain text. */
async function legacySubscription(secret: string): Promise<string> {
  const [{ id }] = await db()('webhook_subscriptions').insert({ organizationId: org.orgId, name: 'legacy', url: hookUrl, eventTypes: ['*'] }).returning('id');
  await db().raw('ALTER TABLE webhook_secrets DROP COLUMN sealed_secret, ADD COLUMN secret text');
  await db()('webhook_secrets').insert({ subscriptionId: id, secret });
  return id;
}

async function createWallet(name: string): Promise<{ id: string; walletAddress: string }> {
  const core = new ApiClient(t.coreUrl, org.core.credentials); // the ports change on restart
  const chains = (await core.get('/v1/blockchains')).body.data;
  const res = await core.post('/v1/master-wallets', { blockchainId: chains[0].id, name });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** The wallet's mnemonic opens and derives the wallet's address. */
async function walletOpens(wallet: { id: string; walletAddress: string }): Promise<boolean> {
  const row = await db()('master_wallets').where({ id: wallet.id }).first('sealedMnemonic');
  try {
    return (await t.keel.services.walletKeys.signer(wallet.id, row.sealedMnemonic, 0)).address === wallet.walletAddress;
  } catch {
    return false;
  }
}

/** An event is delivered, signed with the secret the receiver was given. */
async function deliversSignedWith(secret: string): Promise<void> {
  const before = receiver.requests.length;
  await db().transaction((trx) => t.keel.platform.outbox.publish(trx, { organizationId: org.orgId, type: 'master.created', data: {} }));
  await eventually(() => receiver.requests.length > before);
  const request = receiver.requests[before];
  expect(request.headers['x-keel-signature']).toBe(keelSignature(secret, request.body));
}

function reseal(env: Record<string, string>): Promise<{ keyId: string; resealed: Record<string, number> }> {
  return keelCommand(t.config, ['secrets', 'reseal'], { KEEL_CHAINS: t.config.KEEL_CHAINS, ...env });
}

const sealedValues = async (): Promise<string[]> => [
  ...(await db()('master_wallets').select('sealedMnemonic')).map((r) => r.sealedMnemonic),
  ...(await db()('webhook_secrets').select('sealedSecret')).map((r) => r.sealedSecret),
];

test('012 seals plain-text webhook secrets; KEEL_MASTER_KEY rotates with both keys working until reseal moves everything to the new one', async () => {
  // Before the rotation: a secret stored in plain text by an older Keel, sealed by the migration.
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const subscriptionId = await legacySubscription(secret);
  await sealWebhookSecrets({ secretBox: t.keel.platform.secretBox }).up(db());
  const stored = await db()('webhook_secrets').where({ subscriptionId }).first();
  expect(stored).not.toHaveProperty('secret');
  expect(stored.sealedSecret).toMatch(new RegExp(`^v2\\.${keyId(Buffer.from(OLD_KEY, 'hex'))}\\.`));
  expect(stored.sealedSecret).not.toContain(secret);
  await deliversSignedWith(secret);
  const oldWallet = await createWallet('sealed under the old key');

  // Rotation: the new key seals, the old one still opens.
  await t.restart({ KEEL_MASTER_KEY: NEW_KEY, KEEL_MASTER_KEY_PREVIOUS: OLD_KEY });
  const newWallet = await createWallet('sealed under the new key');
  expect(await walletOpens(oldWallet)).toBe(true);
  expect(await walletOpens(newWallet)).toBe(true);
  await deliversSignedWith(secret);
  expect(() => new SecretBox(Buffer.from(NEW_KEY, 'hex')).open(stored.sealedSecret, subscriptionId)).toThrow(/neither KEEL_MASTER_KEY nor KEEL_MASTER_KEY_PREVIOUS/);

  const result = await reseal({ KEEL_MASTER_KEY: NEW_KEY, KEEL_MASTER_KEY_PREVIOUS: OLD_KEY });
  expect(result).toEqual({ keyId: keyId(Buffer.from(NEW_KEY, 'hex')), resealed: { masterWallets: 1, webhookSecrets: 1 } });
  for (const sealed of await sealedValues()) expect(sealed.startsWith(`v2.${result.keyId}.`)).toBe(true);
  expect(await reseal({ KEEL_MASTER_KEY: NEW_KEY })).toEqual({ keyId: result.keyId, resealed: { masterWallets: 0, webhookSecrets: 0 } });

  // The old key removed: everything still opens.
  await t.restart({ KEEL_MASTER_KEY: NEW_KEY });
  expect(await walletOpens(oldWallet)).toBe(true);
  expect(await walletOpens(newWallet)).toBe(true);
  await deliversSignedWith(secret);
});
