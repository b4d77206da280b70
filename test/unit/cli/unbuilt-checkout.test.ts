import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', '..', 'bin', 'keel.js');

/** bin/keel.js in a checkout of its own that was never built (no dist/). */
let checkout: string;
beforeAll(() => {
  checkout = mkdtempSync(join(tmpdir(), 'keel-unbuilt-'));
  mkdirSync(join(checkout, 'bin'));
  copyFileSync(BIN, join(checkout, 'bin', 'keel.js'));
});
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

test('`keel` in an unbuilt checkout prints one line saying to run npm install, exits 1, and shows no stack', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [join(checkout, 'bin', 'keel.js'), 'doctor'], { cwd: checkout }, (_error, out, err) => resolve({ code: child.exitCode, stdout: out, stderr: err }));
  });
  expect(stdout).toBe('');
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).toContain('this checkout is not built');
  expect(stderr).toContain(`run \`npm install\` in ${checkout}, which builds it`);
  expect(stderr).not.toMatch(/MODULE_NOT_FOUND|\n\s+at /);
  expect(code).toBe(1);
});
