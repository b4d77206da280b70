/**
 * `npm run generate`: the typed paths of both hosts into src/generated/, from the OpenAPI documents
 * Keel serves at /v1/openapi.json, built here from Keel's sources without starting it.
 *
 * `--documents <dir>` reads core.json and pro.json from there instead (documents a running Keel
 * served), and `--out <dir>` writes elsewhere: test/client/generated-types.test.ts regenerates from
 * a started Keel's documents that way and compares with the committed files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GENERATED_FILES, renderTypes } from './render-types';

const HOSTS = ['core', 'pro'] as const;

async function document(host: (typeof HOSTS)[number], from: string | undefined): Promise<Record<string, unknown>> {
  if (from) return JSON.parse(readFileSync(join(from, `${host}.json`), 'utf8')) as Record<string, unknown>;
  // Loaded only here: it builds Keel's schema, which the --documents form needs not.
  const { hostOpenApiDocument } = await import('../../../src/api-documents');
  return hostOpenApiDocument(host);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { documents: { type: 'string' }, out: { type: 'string' } } });
  for (const host of HOSTS) {
    const file = join(values.out ?? join(__dirname, '..', 'src', 'generated'), GENERATED_FILES[host]);
    writeFileSync(file, await renderTypes(await document(host, values.documents)));
    console.log(`wrote ${file}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
