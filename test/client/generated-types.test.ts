import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useTestKeel } from '../support/use-test-keel';
import { hostOpenApiDocument } from '../../src/api-documents';

/**
 * The client's generated types are those of the API Keel serves: an API change without
 * `npm run generate` (in clients/typescript) fails here.
 */
const { t } = useTestKeel();
const ROOT = join(__dirname, '..', '..');
const CLIENT = join(ROOT, 'clients', 'typescript');
const HOSTS = ['core', 'pro'] as const;

let dir: string;
const served: Record<string, Record<string, unknown>> = {};

/**
 * Both documents as the hosts serve them, and the client's generator run on them in a child
 * process (openapi-typescript needs Node's require of ES modules, which jest's module loader lacks).
 */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-client-'));
  for (const host of HOSTS) {
    served[host] = (await (await fetch(`${host === 'core' ? t.coreUrl : t.proUrl}/v1/openapi.json`)).json()) as Record<string, unknown>;
    writeFileSync(join(dir, `${host}.json`), JSON.stringify(served[host]));
  }
  const generate = [join(CLIENT, 'scripts', 'generate.ts'), '--documents', dir, '--out', dir];
  await promisify(execFile)(process.execPath, ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), ...generate], { cwd: CLIENT, timeout: 60_000 });
}, 90_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(HOSTS)('the %s host', (host) => {
  test('serves the document `npm run generate` builds from the sources', async () => {
    expect(await hostOpenApiDocument(host)).toEqual(served[host]);
  });

  test(`its committed types (clients/typescript/src/generated/${host}.ts) are what the served document generates`, () => {
    const committed = readFileSync(join(CLIENT, 'src', 'generated', `${host}.ts`), 'utf8');
    expect(committed).toBe(readFileSync(join(dir, `${host}.ts`), 'utf8'));
  });
});

test('the package compiles with its own tsconfig against the committed types (what `npm run build` in clients/typescript does)', async () => {
  const tsc = require.resolve('typescript/bin/tsc');
  // Rejects with tsc's diagnostics on stdout when a type error is found.
  await expect(promisify(execFile)(process.execPath, [tsc, '-p', join(CLIENT, 'tsconfig.json'), '--noEmit'], { cwd: CLIENT, timeout: 120_000 })).resolves.toBeDefined();
}, 150_000);
