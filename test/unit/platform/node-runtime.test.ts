import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; devDependencies: Record<string, string> };
const majorOf = (version: string) => Number(/(\d+)/.exec(version)?.[1]);

/** The Node line Keel supports, from package.json's `engines` (a `>=N` floor). */
const supportedLine = majorOf(pkg.engines.node);

describe('the Node runtime: one LTS line named in package.json, the Dockerfile and the types', () => {
  it('names a current LTS line (24 or newer) as the floor in engines', () => {
    expect(pkg.engines.node).toMatch(/^>=\d+$/);
    expect(supportedLine).toBeGreaterThanOrEqual(24);
  });

  it('runs this suite on that line (CI puts the npm registry\'s node package first on PATH)', () => {
    expect(majorOf(process.versions.node)).toBeGreaterThanOrEqual(supportedLine);
  });

  it('builds and runs the image on the same line', () => {
    const bases = [...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(bases).toEqual([supportedLine, supportedLine]);
  });

  it('type-checks against the same line\'s @types/node', () => {
    expect(majorOf(pkg.devDependencies['@types/node'])).toBe(supportedLine);
  });
});
