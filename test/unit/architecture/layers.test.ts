import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.js');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
/** The layers' paths, as the rule set's `in-a-layer` rule lists them. */
const LAYER_PATHS = (require(CONFIG) as { forbidden: { name: string; from: { pathNot?: string[] } }[] }).forbidden.find((r) => r.name === 'in-a-layer')!.from.pathNot!;

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}
interface CruiseResult {
  modules: { source: string }[];
  summary: { violations: Violation[] };
}

/** dependency-cruiser over src/ and rest-compat/ of `cwd`, with Keel's rule set. */
function cruise(cwd: string): CruiseResult {
  const run = spawnSync(process.execPath, [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', 'src', 'rest-compat'], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (!run.stdout) throw new Error(`dependency-cruiser failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as CruiseResult;
}

const described = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (circle: ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`;

describe("Keel's imports point down the layers of ARCHITECTURE.md", () => {
  let result: CruiseResult;
  beforeAll(() => {
    result = cruise(ROOT);
  });

  it('reads every file of src/ and rest-compat/', () => {
    expect(result.modules.length).toBeGreaterThan(300);
  });

  it('places every file in one layer', () => {
    const unplaced = result.modules.map((m) => m.source).filter((source) => LAYER_PATHS.filter((path) => new RegExp(path).test(source)).length !== 1);
    expect(unplaced).toEqual([]);
  });

  it('has no import back up a layer, no circle of files and no circle of module folders', () => {
    expect(result.summary.violations.map(described)).toEqual([]);
  });
});

describe('the rule set refuses what the layers forbid', () => {
  let tree: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  };
  beforeAll(() => {
    tree = mkdtempSync(join(tmpdir(), 'keel-layers-'));
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true } }));
    // platform reaching up into a module; a module importing the composition root's type
    write('src/platform/clock.ts', "import { Order } from '../modules/orders/order';\nexport const at = (o: Order) => o;\n");
    write('src/modules/orders/order.ts', "import type { Services } from '../../services';\nexport interface Order { services?: Services }\n");
    write('src/services.ts', 'export interface Services { n: number }\n');
    // two module folders that import each other through different files
    write('src/modules/aml/flagger.ts', "import { recorded } from '../deposits/recorder';\nexport const flag = () => recorded;\n");
    write('src/modules/deposits/recorder.ts', 'export const recorded = 1;\n');
    write('src/modules/deposits/types-view.ts', "import { flag } from '../aml/flagger';\nexport const shown = flag;\n");
    // a module reaching into another's file rather than through its face; and one that goes through the face
    write('src/modules/wallets/wallet-keys.ts', 'export const keyOf = (id: string) => id;\n');
    write('src/modules/wallets/index.ts', "export { keyOf } from './wallet-keys';\n");
    write('src/modules/swaps/swap.service.ts', "import { keyOf } from '../wallets/wallet-keys';\nexport const swapKey = keyOf;\n");
    write('src/modules/swaps/quote.ts', "import { keyOf } from '../wallets';\nexport const quoteKey = keyOf;\n");
    // a service reaching for the GraphQL kit
    write('src/graphql-kit/context.ts', 'export interface GraphQLContext { n: number }\n');
    write('src/modules/orders/order.service.ts', "import type { GraphQLContext } from '../../graphql-kit/context';\nexport const serve = (c: GraphQLContext) => c;\n");
    // the REST shim reaching into the server for a constant
    write('src/server/protocol-checks.ts', 'export const MAX_URL_LENGTH = 8192;\n');
    write('rest-compat/openapi.ts', "import { MAX_URL_LENGTH } from '../src/server/protocol-checks';\nexport const limit = MAX_URL_LENGTH;\n");
  });
  afterAll(() => rmSync(tree, { recursive: true, force: true }));

  it('names each forbidden arrow and the rule it breaks', () => {
    const found = cruise(tree).summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'platform-points-down: src/platform/clock.ts -> src/modules/orders/order.ts',
        'modules-points-down: src/modules/orders/order.ts -> src/services.ts',
        'rest-compat-points-down: rest-compat/openapi.ts -> src/server/protocol-checks.ts',
        'graphql-kit-only-in-resolvers-and-types: src/modules/orders/order.service.ts -> src/graphql-kit/context.ts',
        'modules-through-faces: src/modules/swaps/swap.service.ts -> src/modules/wallets/wallet-keys.ts',
      ]),
    );
    expect(found.filter((f) => f.startsWith('modules-through-faces: src/modules/swaps/quote.ts'))).toEqual([]);
    expect(found.filter((f) => f.startsWith('modules-through-faces: src/modules/wallets/'))).toEqual([]);
    expect(found.filter((f) => f.startsWith('no-circular-modules:'))).not.toEqual([]);
  });
});
