import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useTestKeel } from '../support/use-test-keel';
import { eventually } from '../support/eventually';
import { buildApiPageBundles, launchChromium, screenshot, seriousAxeViolations, watchedPage, WatchedPage } from './support';

/**
 * The API reference (/docs, Scalar) on both hosts and the GraphQL explorer (GraphiQL at /graphql)
 * in sandbox, driven in Debian's Chromium: each page renders its host's API, leaves no console error
 * and no CSP violation (support.ts reports both), and has no serious axe finding. Screenshots go to
 * test-artifacts/console/.
 */
const { t, orgs: [org] } = useTestKeel({}, { orgs: 1 });
let browser: Browser;
let context: BrowserContext;
let opened: WatchedPage[] = [];

beforeAll(async () => {
  await buildApiPageBundles();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(60_000);
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  const problems = opened.flatMap((w) => w.problems);
  await Promise.all(opened.map((w) => w.page.close()));
  opened = [];
  expect(problems).toEqual([]);
});

async function open(url: string): Promise<Page> {
  const watched = await watchedPage(context);
  opened.push(watched);
  await watched.page.goto(url);
  return watched.page;
}

/**
 * A tag's operations as the reference lists them (method and path), and one operation's request
 * example: a curl command with its method and a JSON body made from the schema.
 */
async function showsOperationWithExample(page: Page, tag: string, method: string, path: string): Promise<void> {
  const exactly = (text: string) => new RegExp(`^\\s*${text.replace(/[/{}]/g, '\\$&')}\\s*$`, 'i');
  await page
    .locator(`ul[aria-label="${tag} endpoints"] a.endpoint`)
    .filter({ has: page.locator('.endpoint-path', { hasText: exactly(path) }) })
    .filter({ has: page.locator('.endpoint-method', { hasText: exactly(method) }) })
    .first()
    .waitFor();
  const example = new RegExp(`curl[^\\n]*${path.replace(/\//g, '\\/')}[\\s\\S]{0,400}--request ${method}[\\s\\S]{0,800}--data`);
  await eventually(async () => example.test(await page.locator('body').innerText()), 60_000, 500);
}

describe('the API reference at /docs', () => {
  test('on the core host shows its operations with request examples', async () => {
    const page = await open(`${t.coreUrl}/docs#tag/webhooks/POST/v1/webhooks`);
    await page.getByRole('heading', { name: 'Keel core API' }).waitFor();
    await showsOperationWithExample(page, 'Webhooks', 'POST', '/v1/webhooks');
    await screenshot(page, 'docs-core');
    expect(await seriousAxeViolations(page)).toEqual([]);
  }, 240_000);

  test('on the pro host shows the order book\'s operations', async () => {
    const page = await open(`${t.proUrl}/docs#tag/orders/POST/v1/orderbook/orders`);
    await page.getByRole('heading', { name: 'Keel order-book API' }).waitFor();
    await showsOperationWithExample(page, 'Orders', 'POST', '/v1/orderbook/orders');
    expect(await page.locator('a.endpoint .endpoint-path', { hasText: /^\/v1\/webhooks$/ }).count()).toBe(0);
    await screenshot(page, 'docs-pro');
    expect(await seriousAxeViolations(page)).toEqual([]);
  }, 240_000);
});

describe('the GraphQL explorer at /graphql', () => {
  test('runs a query with the key pasted into its headers and shows the answer', async () => {
    const page = await open(`${t.coreUrl}/graphql`);
    const run = page.getByRole('button', { name: /^Execute query/ });
    await run.waitFor();
    // The default query reads the organisation; without a credential it is not sent.
    await run.click();
    await page.locator('.result-window', { hasText: 'into Headers' }).waitFor();
    // Paste the key over the headers' template; Monaco's auto-closed brackets after the cursor go.
    await page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden) .monaco-editor').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.insertText(JSON.stringify({ apiKey: org.adminKey, orgId: org.orgId }));
    await page.keyboard.press('Shift+ControlOrMeta+End');
    await page.keyboard.press('Delete');
    await run.click();
    await page.locator('.result-window', { hasText: org.orgId }).waitFor();
    // Monaco draws spaces as no-break spaces.
    expect((await page.locator('.result-window').innerText()).replace(/\u00a0/g, ' ')).toContain(`"name": "${org.name}"`);
    await screenshot(page, 'graphql-explorer');
    expect(await seriousAxeViolations(page)).toEqual([]);
  }, 240_000);
});

describe('/graphql beside the explorer', () => {
  const browserAccept = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
  const credentials = () => ({ apiKey: org.adminKey, orgId: org.orgId });

  test('a browser opening it without credentials gets the page, under the strict policy', async () => {
    const res = await fetch(`${t.coreUrl}/graphql`, { headers: browserAccept });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self';.*style-src 'self' 'nonce-/);
    expect(await res.text()).toContain('/graphql/explorer/app.js');
  });

  test('a query over GET, even from a browser, is answered as GraphQL', async () => {
    const query = encodeURIComponent('{ organization { id } }');
    const res = await fetch(`${t.coreUrl}/graphql?query=${query}`, { headers: { ...browserAccept, ...credentials() } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { organization: { id: org.orgId } } });
    expect((await fetch(`${t.coreUrl}/graphql?query=${query}`, { headers: browserAccept })).status).toBe(401);
  });

  test('a persisted query over GET, even from a browser, is answered as GraphQL; POSTs are GraphQL', async () => {
    const query = '{ organization { name } }';
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } });
    const registered = await fetch(`${t.coreUrl}/graphql`, {
      method: 'POST',
      headers: { ...browserAccept, ...credentials(), 'content-type': 'application/json' },
      body: JSON.stringify({ query, extensions: JSON.parse(extensions) }),
    });
    expect(await registered.json()).toEqual({ data: { organization: { name: org.name } } });
    const byHash = await fetch(`${t.coreUrl}/graphql?extensions=${encodeURIComponent(extensions)}`, { headers: { ...browserAccept, ...credentials() } });
    expect(byHash.status).toBe(200);
    expect(await byHash.json()).toEqual({ data: { organization: { name: org.name } } });
  });
});
