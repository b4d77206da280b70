import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GraphQLEnumType, isEnumType } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { buildHostSchema } from '../../../src/schema';

const MODULES = join(__dirname, '..', '..', '..', 'src', 'modules');

/** Every value exported by a module's *.domain.ts, with the file that exports it. */
function domainExports(): Map<unknown, string> {
  const found = new Map<unknown, string>();
  for (const module of readdirSync(MODULES)) {
    for (const file of readdirSync(join(MODULES, module)).filter((f) => f.endsWith('.domain.ts'))) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      for (const value of Object.values(require(join(MODULES, module, file)) as Record<string, unknown>)) {
        if (value && typeof value === 'object') found.set(value, `${module}/${file}`);
      }
    }
  }
  return found;
}

describe("one way to write a vocabulary: every GraphQL enum is a module's domain enum, registered once", () => {
  let enums: GraphQLEnumType[];
  let registered: { name: string; enumObj: object }[];
  beforeAll(async () => {
    const schemas = await Promise.all([buildHostSchema('core'), buildHostSchema('pro')]);
    const byName = new Map<string, GraphQLEnumType>();
    for (const schema of schemas) {
      for (const type of Object.values(schema.getTypeMap())) if (isEnumType(type) && !type.name.startsWith('__')) byName.set(type.name, type);
    }
    enums = [...byName.values()];
    registered = getMetadataStorage().enums as unknown as { name: string; enumObj: object }[];
  });

  it('finds the enums of both hosts', () => {
    expect(enums.length).toBeGreaterThan(20);
  });

  it('registers each GraphQL enum from an object a *.domain.ts exports', () => {
    const domain = domainExports();
    const notDomain = enums
      .map((e) => ({ name: e.name, registrations: registered.filter((r) => r.name === e.name) }))
      .filter(({ registrations }) => registrations.length !== 1 || !domain.has(registrations[0].enumObj))
      .map(({ name, registrations }) => `${name}: ${registrations.length} registration(s)${registrations.length === 1 ? ', not from a *.domain.ts' : ''}`);
    expect(notDomain).toEqual([]);
  });

  it('registers each domain enum once, under one name', () => {
    const twice = registered.filter((r, i) => registered.findIndex((o) => o.enumObj === r.enumObj) !== i).map((r) => r.name);
    expect(twice).toEqual([]);
  });

  it("gives each GraphQL enum exactly its domain enum's values", () => {
    const mismatched = enums.filter((e) => {
      const domain = registered.find((r) => r.name === e.name)!.enumObj as Record<string, string>;
      return JSON.stringify(e.getValues().map((v) => [v.name, v.value]).sort()) !== JSON.stringify(Object.entries(domain).sort());
    });
    expect(mismatched.map((e) => e.name)).toEqual([]);
  });
});
