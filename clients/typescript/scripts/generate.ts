/**
 * `npm run generate`: the typed paths of both hosts, from the OpenAPI documents Keel serves at
 * /v1/openapi.json (built here from Keel's sources, without starting it), into src/generated/.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostOpenApiDocument } from '../../../rest-compat/host-documents';
import { GENERATED_FILES, renderTypes } from './render-types';

async function main(): Promise<void> {
  for (const host of ['core', 'pro'] as const) {
    const file = join(__dirname, '..', 'src', 'generated', GENERATED_FILES[host]);
    writeFileSync(file, await renderTypes(await hostOpenApiDocument(host)));
    console.log(`wrote ${file}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
