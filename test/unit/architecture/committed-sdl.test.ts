import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildHostSchema, printHostSchema, SCHEMA_FILES } from '../../../src/schema';

/**
 * The SDL in schema/ is the GraphQL contract dashboards build against: a refactoring must leave it
 * byte-identical, and a deliberate API change regenerates it (`npm run schema`) in the same commit.
 * (The OpenAPI documents are held the same way by the client's committed types, test/client/.)
 */
describe.each(['core', 'pro'] as const)('the %s host', (host) => {
  const committed = () => readFileSync(join(__dirname, '..', '..', '..', 'schema', SCHEMA_FILES[host]), 'utf8');

  test(`schema/${SCHEMA_FILES[host]} is the SDL the sources build`, async () => {
    expect(printHostSchema(await buildHostSchema(host))).toBe(committed());
  });

  test('a serving node builds the same schema without the build-time check', async () => {
    expect(printHostSchema(await buildHostSchema(host, undefined, { checked: false }))).toBe(committed());
  });
});
