import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';
import { runKeel } from '../../support/keel-process';

const ROOT = join(__dirname, '..', '..', '..');
const database = `${runPrefix()}_progress_${process.pid}`;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = { ...process.env, DATABASE_URL: await createTestDatabase(database), LOG_LEVEL: 'silent' };
});
afterAll(() => dropTestDatabase(database));

/** `keel <args>` on a pseudo-terminal (util-linux `script`): what an operator's terminal shows, stdout and stderr together. */
async function onTerminal(args: string[]): Promise<string> {
  const command = [process.execPath, '-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(ROOT, 'src', 'cli', 'main.ts'), ...args].map((a) => `'${a}'`).join(' ');
  const { stdout } = await promisify(execFile)('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: ROOT, env, timeout: 90_000 });
  return stdout;
}

const SANCTIONS = join(ROOT, 'data', 'sanctions');

test('`keel aml load` shows its steps on a terminal, clears them, then prints the JSON result', async () => {
  const screen = await onTerminal(['aml', 'load', SANCTIONS]);
  expect(screen).toContain(`\x1b[2Kreading ${SANCTIONS}…`);
  expect(screen).toMatch(/\x1b\[2Kloading \d+ addresses of [A-Z, ]+ into PostgreSQL…/);
  // The progress line is cleared, then the result is printed in its place: it ends the screen.
  expect(screen).toMatch(/\r\x1b\[2K\{"loaded":[^\x1b]*\}\s*$/);
});

test('with --json the terminal shows only the JSON result', async () => {
  const screen = await onTerminal(['aml', 'load', SANCTIONS, '--json']);
  expect(screen).not.toContain('\x1b[2K');
  expect(JSON.parse(screen.trim())).toMatchObject({ inUse: true });
});

test('through a pipe (a script, CI) stderr stays empty', async () => {
  const { code, stdout, stderr } = await runKeel(['aml', 'load', SANCTIONS], env, 60_000);
  expect(stderr).toBe('');
  expect(JSON.parse(stdout.trim())).toMatchObject({ inUse: true });
  expect(code).toBe(0);
});
