import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, Browser, BrowserContext, Page } from 'playwright-core';

/** Where screenshots go (git-ignored): test-artifacts/console/. */
export const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts', 'console');

/** Debian's Chromium, headless, with nothing of its own on the network. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** Builds the API reference and the GraphQL explorer (dist/docs, dist/graphql-explorer), as `npm run build` does. */
export async function buildApiPageBundles(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildApiPages } = require('../../scripts/build-api-pages.js') as { buildApiPages: () => Promise<unknown> };
  await buildApiPages();
}

/** Builds the console bundle (dist/console) the hosts serve, as `npm run build` does. */
export async function buildConsoleBundle(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildConsole } = require('../../scripts/build-console.js') as { buildConsole: () => Promise<string> };
  await buildConsole();
}

/** A page that records every console error, page error and failed request, to assert there were none. */
export interface WatchedPage {
  page: Page;
  problems: string[];
}

export async function watchedPage(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const problems: string[] = [];
  // Chromium logs a refusal as a console error too; the event also names the directive and what it refused.
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.effectiveDirective} refused ${e.blockedURI || 'inline'} in ${e.sourceFile}:${e.lineNumber}`))",
  );
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  return { page, problems };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (injected over CDP, not as a script tag the CSP would refuse). */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: { run(o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe.run({ resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
