import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Example, GraphqlExample, ShellExample, TypeScriptExample } from './markdown-examples';

const ROOT = join(__dirname, '..', '..');

/** The variables the examples of one document share: given by the test's setup, then added to by each example. */
export type Variables = Record<string, string>;

/**
 * What the shell examples run in: bash with `-euo pipefail`, so a failing command or an unset
 * variable fails the example; curl fails on an HTTP error (the answer is still printed) unless the
 * example prints the status itself (`-w '%{http_code}'`, to show a refusal), and gives up after 30 s; `npx keel …` runs Keel's command line from the sources against the Keel under test.
 * `set -a` exports every assignment, so the runner reads back what an example defined.
 */
const PRELUDE = `set -euo pipefail
set -a
curl() {
  local arg
  for arg in "$@"; do
    case "$arg" in -w|--write-out|--write-out=*) command curl --silent --show-error --max-time 30 "$@"; return;; esac
  done
  command curl --silent --show-error --fail-with-body --max-time 30 "$@"
}
npx() {
  if [ "\${1:-}" = keel ]; then shift; node -r "$KEEL_EXAMPLES_SWC" "$KEEL_EXAMPLES_CLI" "$@"
  else command npx "$@"; fi
}
`;

export class ExampleFailed extends Error {}

/** Runs one example with `variables`; resolves with the variables after it (those it set added). */
export function runExample(example: Example, variables: Variables, cliEnv: Record<string, string>, where: string): Promise<Variables> {
  if (example.kind === 'sh') return runShell(example, variables, cliEnv, where);
  if (example.kind === 'ts') return runTypeScript(example, variables, where).then(() => variables);
  return runGraphql(example, variables, where);
}

/** Runs `command` with `env`; rejects with ExampleFailed (its output's tail) when it fails or takes over two minutes. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, example: Example, where: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    execFile(command, args, { cwd: ROOT, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve();
      const tail = (text: string) => text.split('\n').slice(-15).join('\n');
      reject(new ExampleFailed(`${where}: the ${example.kind} example failed (${error.killed ? 'timed out' : `exit ${error.code}`})\n--- example ---\n${example.code}\n--- stdout ---\n${tail(stdout)}\n--- stderr ---\n${tail(stderr)}`));
    });
  });
}

/**
 * A TypeScript example is a program of its own, in a folder where `@keel/client` is the client's
 * sources (as a project that installed the package would have it), compiled by SWC as jest does.
 */
async function runTypeScript(example: TypeScriptExample, variables: Variables, where: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-example-'));
  try {
    mkdirSync(join(dir, 'node_modules', '@keel'), { recursive: true });
    symlinkSync(join(ROOT, 'clients', 'typescript', 'src'), join(dir, 'node_modules', '@keel', 'client'), 'dir');
    writeFileSync(join(dir, 'example.ts'), example.code);
    await run(process.execPath, ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(dir, 'example.ts')], { ...process.env, ...variables }, example, where);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runShell(example: ShellExample, variables: Variables, cliEnv: Record<string, string>, where: string): Promise<Variables> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-example-'));
  const out = join(dir, 'env');
  const script = `${PRELUDE}\n${example.code}\nenv -0 > "$KEEL_EXAMPLES_ENV_OUT"\n`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...cliEnv,
    ...variables,
    KEEL_EXAMPLES_SWC: join(ROOT, 'test', 'support', 'swc-register.js'),
    KEEL_EXAMPLES_CLI: join(ROOT, 'src', 'cli', 'main.ts'),
    KEEL_EXAMPLES_ENV_OUT: out,
  };
  try {
    await run('bash', ['-c', script], env, example, where);
    const after: Variables = { ...variables };
    for (const entry of readFileSync(out, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      const name = entry.slice(0, eq);
      // Only the example's own (upper-case) variables: not bash's or the environment's.
      if (/^[A-Z][A-Z0-9_]*$/.test(name) && !name.startsWith('KEEL_EXAMPLES_') && (name in variables || env[name] === undefined)) after[name] = entry.slice(eq + 1);
    }
    return after;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `$NAME` and `${NAME}` in a string, from the variables; an unset one is an error, as in bash with -u. */
function substitute(text: string, variables: Variables, where: string): string {
  return text.replace(/\$\{?([A-Z][A-Z0-9_]*)\}?/g, (_, name: string) => {
    if (!(name in variables)) throw new ExampleFailed(`${where}: $${name} is not set (no setup or earlier example defines it)`);
    return variables[name];
  });
}

function substituteIn(value: unknown, variables: Variables, where: string): unknown {
  if (typeof value === 'string') return substitute(value, variables, where);
  if (Array.isArray(value)) return value.map((v) => substituteIn(v, variables, where));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteIn(v, variables, where)]));
  return value;
}

function pathIn(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((at, part) => (at === null || at === undefined ? undefined : (at as Record<string, unknown>)[part]), value);
}

async function runGraphql(example: GraphqlExample, variables: Variables, where: string): Promise<Variables> {
  const host = example.attributes.host ?? 'core';
  const url = variables[host === 'pro' ? 'PRO' : 'CORE'];
  const keyName = example.attributes.key ?? (host === 'pro' ? 'PRO_KEY' : 'ADMIN_KEY');
  const apiKey = variables[keyName];
  if (!url || !apiKey) throw new ExampleFailed(`${where}: no ${host === 'pro' ? 'PRO' : 'CORE'} URL or ${keyName} to run the GraphQL example with`);
  const graphqlVariables = example.variables === undefined ? undefined : substituteIn(JSON.parse(example.variables), variables, where);
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apiKey, orgId: variables.ORG_ID },
    body: JSON.stringify({ query: example.code, variables: graphqlVariables }),
  });
  const body = (await res.json().catch(() => undefined)) as { data?: Record<string, unknown>; errors?: unknown[] } | undefined;
  if (res.status !== 200 || !body?.data || body.errors?.length) {
    throw new ExampleFailed(`${where}: the GraphQL example failed (HTTP ${res.status})\n--- example ---\n${example.code}\n--- variables ---\n${JSON.stringify(graphqlVariables)}\n--- answer ---\n${JSON.stringify(body)}`);
  }
  const after: Variables = { ...variables };
  if (example.attributes.save) {
    const [name, path] = example.attributes.save.split(':');
    const value = pathIn(body, path);
    if (value === undefined || value === null) throw new ExampleFailed(`${where}: save=${example.attributes.save}: the answer has nothing at ${path}: ${JSON.stringify(body)}`);
    after[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return after;
}
