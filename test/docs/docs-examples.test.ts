import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestKeel, TestKeel } from '../support/keel';
import { WebhookReceiver } from '../support/webhook-receiver';
import { ExampleFailed, runExample, Variables } from './example-runner';
import { examplesIn, examplesOfFile } from './markdown-examples';

/**
 * The documentation's examples run as written against a started Keel: every ```sh keel-example
 * and ```graphql keel-example block of the README and of each guide, in the order a reader meets
 * them, each document on a Keel of its own (its own database, the run's dev chains). An example
 * that no longer matches the API (a renamed field, a changed path, a refusal) fails here.
 */
const ROOT = join(__dirname, '..', '..');

/** The task guides: each shows its tasks with curl and with GraphQL. */
const GUIDES = [
  'docs/custody-and-withdrawals.md',
  'docs/signing.md',
  'docs/swaps-and-settlement-rules.md',
  'docs/payments-and-checkout.md',
  'docs/trading-and-realtime.md',
  'docs/webhooks.md',
  'docs/agents-and-policies.md',
  'docs/aml-and-prices.md',
  'docs/browser-access.md',
  'docs/api-conventions.md',
  'docs/operating-keel.md',
];

/** Fast loops, so waiting for a deposit or a delivery takes a second or two; a receiver on loopback. */
const DOCS_KEEL = {
  RATE_LIMIT_SCALE: 100,
  CHAIN_POLL_INTERVAL_MS: 100,
  CHECKOUT_POLL_INTERVAL_MS: 100,
  TRANSFER_POLL_INTERVAL_MS: 100,
  OUTBOX_POLL_INTERVAL_MS: 20,
  WEBHOOKS_ALLOW_PRIVATE_URLS: true,
  // Orders trade balances deposited into the settlement contract, which the settlement worker deploys.
  SETTLEMENT_ENABLED: true,
  SETTLEMENT_POLL_INTERVAL_MS: 100,
  SETTLEMENT_BATCH_MAX_AGE_MS: 300,
} as const;

/** What the README's tour starts from: the two hosts and a URL for webhooks. */
function hostVariables(t: TestKeel, webhookUrl: string): Variables {
  return { CORE: t.coreUrl, PRO: t.proUrl, WEBHOOK_URL: webhookUrl };
}

/** What every guide starts from: the guides' own setup ("Before you start" in docs/README.md), run as written. */
async function guideVariables(t: TestKeel, webhookUrl: string): Promise<Variables> {
  let variables = hostVariables(t, webhookUrl);
  for (const example of examplesOfFile(join(ROOT, 'docs/README.md'))) variables = await runExample(example, variables, cliEnv(t), `docs/README.md:${example.line}`);
  for (const name of ['ORG_ID', 'ADMIN_KEY', 'PRO_KEY', 'CHAIN_ID', 'ETH_ID', 'USDC_ID', 'DAI_ID']) expect(variables[name]).toMatch(/\S/);
  return variables;
}

/** `npx keel …` in the examples: the command line beside the Keel under test. */
function cliEnv(t: TestKeel): Record<string, string> {
  return {
    DATABASE_URL: t.config.DATABASE_URL,
    REDIS_URL: t.config.REDIS_URL,
    REDIS_PREFIX: t.config.REDIS_PREFIX,
    KEEL_CHAINS: process.env.KEEL_CHAINS ?? '',
    KEEL_MASTER_KEY: process.env.KEEL_MASTER_KEY ?? '',
    LOG_LEVEL: 'silent',
  };
}

async function runDocument(doc: string, variablesFor: (t: TestKeel, webhookUrl: string) => Promise<Variables> | Variables): Promise<void> {
  const examples = examplesOfFile(join(ROOT, doc));
  const receiver = new WebhookReceiver();
  const webhookUrl = await receiver.start();
  const t = await startTestKeel(DOCS_KEEL);
  try {
    let variables = await variablesFor(t, webhookUrl);
    for (const example of examples) variables = await runExample(example, variables, cliEnv(t), `${doc}:${example.line}`);
  } finally {
    await t.stop();
    await receiver.stop();
  }
}

test("the README's tour runs as written, from a new organisation to an order on the book", async () => {
  const examples = examplesOfFile(join(ROOT, 'README.md'));
  expect(examples.length).toBeGreaterThan(5);
  await runDocument('README.md', hostVariables);
}, 600_000);

describe.each(GUIDES)('%s', (guide) => {
  test('shows its tasks with curl and with GraphQL', () => {
    const examples = examplesOfFile(join(ROOT, guide));
    expect(examples.some((e) => e.kind === 'sh' && /\bcurl\b/.test(e.code))).toBe(true);
    expect(examples.some((e) => e.kind === 'graphql')).toBe(true);
  });

  test('its examples run as written against a started Keel', () => runDocument(guide, guideVariables), 600_000);
});

test('the README links every guide', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  for (const guide of GUIDES) expect(readme).toContain(`](${guide})`);
});

test('an example that no longer matches the API fails, naming its document and line', async () => {
  const drifted = examplesIn(
    [
      '```sh keel-example',
      'curl -s $CORE/v1/wallets -H "apiKey: $ADMIN_KEY" -H "orgId: $ORG_ID"',
      '```',
      '```graphql keel-example',
      '{ organization { id nickname } }',
      '```',
      '```sh keel-example',
      'curl -s $CORE/v1/api-keys -H "apiKey: $ADMIN_KEY" -H "orgId: $ORG_ID" | jq -e .data[0].id > /dev/null',
      'echo "$UNDEFINED_ID"',
      '```',
      '```ts keel-example',
      "import { createCoreClient, unwrap } from '@keel/client';",
      "const core = createCoreClient({ baseUrl: process.env.CORE!, apiKey: process.env.ADMIN_KEY, orgId: process.env.ORG_ID });",
      "unwrap(core.GET('/v1/master-wallets/{masterId}', { params: { path: { masterId: '00000000-0000-4000-8000-000000000000' } } })).catch((e) => { console.error(e); process.exit(1); });",
      '```',
    ].join('\n'),
  );
  const receiver = new WebhookReceiver();
  const t = await startTestKeel(DOCS_KEEL);
  try {
    const variables = await guideVariables(t, await receiver.start());
    for (const [i, line] of [1, 4, 7, 11].entries()) {
      await expect(runExample(drifted[i], variables, cliEnv(t), `drifted.md:${line}`)).rejects.toThrow(ExampleFailed);
      await expect(runExample(drifted[i], variables, cliEnv(t), `drifted.md:${line}`)).rejects.toThrow(`drifted.md:${line}`);
    }
  } finally {
    await t.stop();
    await receiver.stop();
  }
}, 120_000);
