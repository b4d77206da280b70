import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useTestKeel } from '../../support/use-test-keel';

const ROOT = join(__dirname, '..', '..', '..');
const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
}

const { t } = useTestKeel();
let dir: string;
let problems: Record<'core' | 'pro', Problem[]>;

/**
 * Both documents as the hosts serve them, as core.json and pro.json beside the repository's
 * redocly.yaml and .redocly.lint-ignore.yaml, linted by Redocly CLI with its recommended rules
 * (offline: no telemetry, no update check).
 */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-openapi-'));
  for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml']) copyFileSync(join(ROOT, file), join(dir, file));
  problems = { core: [], pro: [] };
  for (const host of ['core', 'pro'] as const) {
    const doc = await (await fetch(`${host === 'core' ? t.coreUrl : t.proUrl}/v1/openapi.json`)).json();
    writeFileSync(join(dir, `${host}.json`), JSON.stringify(doc, null, 2));
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    // lint exits 1 when it finds an error: the JSON report is what the test reads either way.
    const { stdout } = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', '--config', 'redocly.yaml', '--format', 'json', `${host}.json`], { cwd: dir, env, maxBuffer: 64 << 20 }).catch(
      (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
    );
    problems[host] = (JSON.parse(stdout) as { problems: Problem[] }).problems;
  }
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const described = (list: Problem[]) => list.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);

describe.each(['core', 'pro'] as const)('the %s OpenAPI document under Redocly CLI (recommended rules)', (host) => {
  test('has no error', () => {
    expect(described(problems[host].filter((p) => p.severity === 'error'))).toEqual([]);
  });

  test('has no warning either', () => {
    expect(described(problems[host].filter((p) => p.severity === 'warn'))).toEqual([]);
  });
});
