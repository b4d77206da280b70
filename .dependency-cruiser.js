/**
 * Keel's layers, bottom first, and the rules that keep every import pointing down (ARCHITECTURE.md,
 * Layers). Checked in `npm test` (test/unit/architecture/layers.test.ts); by hand:
 *   npx depcruise src rest-compat
 * A file may import its own layer and the layers below it, never one above. Within a layer there
 * are no circles: not between files, and not between the module folders of src/modules/.
 */
const LAYERS = [
  { name: 'engine', path: '^src/engine/', says: 'pure, synchronous matching: imports nothing else of Keel' },
  { name: 'platform', path: '^src/platform/', says: 'config, db, redis, chain, auth, errors, events: no module, no GraphQL' },
  { name: 'graphql-kit', path: '^src/graphql-kit/', says: 'the GraphQL kit modules build their API face with: context, page and id types, scalars, argument validation, error mapping, grants' },
  { name: 'modules', path: '^src/modules/', says: 'the domain modules: services, stores, workers, and their resolvers and GraphQL types' },
  { name: 'rest-compat', path: '^rest-compat/', says: 'the REST shim: route rows compiled into GraphQL operations, and the OpenAPI documents' },
  { name: 'server', path: '^src/server/', says: 'the HTTP hosts: guards, GraphQL over HTTP and graphql-ws, the REST shim mounted' },
  { name: 'composition', path: '^src/(app|services|schema|api-documents)\\.ts$', says: 'the composition root: services wired (services.ts), each host\'s schema assembled (schema.ts) and its API document (api-documents.ts), roles started (app.ts)' },
  { name: 'cli', path: '^src/cli/', says: 'the keel command line' },
];

/** Engine and platform both stand at the bottom, beside each other: neither imports the other. */
const SIBLINGS = { engine: ['platform'], platform: ['engine'] };

const above = (i) => [...LAYERS.slice(i + 1).map((l) => l.name), ...(SIBLINGS[LAYERS[i].name] ?? [])];
const pathOf = (name) => LAYERS.find((l) => l.name === name).path;

const pointsDown = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `${layer.name}-points-down`,
  comment: `${layer.name} (${layer.says}) imports only ${LAYERS.slice(0, i).filter((l) => !above(i).includes(l.name)).map((l) => l.name).join(', ') || 'itself'}`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: above(i).map(pathOf) },
}));

const ALL_LAYERS = LAYERS.map((l) => l.path);

module.exports = {
  forbidden: [
    {
      name: 'in-a-layer',
      comment: `every file of src/ and rest-compat/ stands in one of the layers: ${LAYERS.map((l) => l.name).join(', ')}`,
      severity: 'error',
      from: { path: '^(src|rest-compat)/', pathNot: ALL_LAYERS },
      to: {},
    },
    {
      name: 'into-a-layer',
      comment: 'an import names a file that stands in a layer',
      severity: 'error',
      from: {},
      to: { path: '^(src|rest-compat)/', pathNot: ALL_LAYERS },
    },
    ...pointsDown,
    {
      name: 'no-circular',
      comment: 'files that import each other in a loop',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-modules',
      comment: 'module folders that import each other in a loop: one of them must stand above the other (a port it owns, wired in services.ts, turns an arrow round)',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/modules/' },
      to: { path: '^src/modules/', circular: true },
    },
    {
      name: 'modules-through-faces',
      comment: 'a module uses another only through its face, src/modules/<m>/index.ts (ARCHITECTURE.md, Module faces); a resolver or GraphQL type may also import another module\'s GraphQL classes from its *.types.ts',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$', '^src/modules/[^/]+/[^/]+\\.types\\.ts$'] },
    },
    {
      name: 'graphql-kit-only-in-resolvers-and-types',
      comment: 'a module\'s services, stores and workers know nothing of GraphQL: only its *.resolver.ts and *.types.ts use the kit',
      severity: 'error',
      from: { path: '^src/modules/', pathNot: '\\.(resolver|types)\\.ts$' },
      to: { path: '^src/graphql-kit/' },
    },
    {
      name: 'graphql-types-only-in-resolvers-and-types',
      comment: 'no service or worker imports a *.types.ts (GraphQL classes): services take and return plain interfaces',
      severity: 'error',
      from: { path: '^src/modules/', pathNot: '\\.(resolver|types)\\.ts$' },
      to: { path: '^src/modules/.+\\.types\\.ts$' },
    },
  ],
  options: {
    includeOnly: '^(src|rest-compat)/',
    // A type-only import is an arrow too: `import type` ties the importer to the file as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
