import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

/** Folders whose code runs in production (the build, the console bundle, the command line)… */
const RUNTIME = ['src', 'rest-compat', 'console', 'bin'];
/** …and those that only build, test or measure it. */
const TOOLING = ['test', 'bench', 'scripts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs|cjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** The package each static import, export … from, require() or import() of a file names. */
function packagesImportedBy(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const patterns = [/^\s*(?:import|export)\b[^;'"]*?\bfrom\s+['"]([^'"]+)['"]/gm, /^\s*import\s+['"]([^'"]+)['"]/gm, /\brequire(?:\.resolve)?\(\s*['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]/g];
  const specifiers = patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1]));
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('node:') && !builtinModules.includes(s.split('/')[0]))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]));
}

function undeclared(dirs: string[], declared: Record<string, string>): string[] {
  const missing = new Set<string>();
  for (const file of dirs.flatMap(sourceFiles)) {
    for (const name of packagesImportedBy(file)) if (!declared[name]) missing.add(`${name} (${relative(ROOT, file)})`);
  }
  return [...missing].sort();
}

describe('package.json declares every package the code imports', () => {
  it('production code imports only dependencies (a devDependency is pruned from the image)', () => {
    expect(undeclared(RUNTIME, pkg.dependencies)).toEqual([]);
  });

  it('tests, benchmarks and build scripts import only declared packages (none reached through another package)', () => {
    expect(undeclared(TOOLING, { ...pkg.dependencies, ...pkg.devDependencies })).toEqual([]);
  });
});
