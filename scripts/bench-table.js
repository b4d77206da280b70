#!/usr/bin/env node
// `node scripts/bench-table.js`: writes docs/performance.md, one table per benchmark, from the
// committed results in bench/results/*.json (`--check`: exits 1 when the page is not current).
//
// A result file: {benchmark, command, date (YYYY-MM-DD), machine, what, notes?, figures, result}.
// `result` is the benchmark's JSON output (`npm run bench -- <name>`, the fields recorded); each
// figure names a value in it: {measure, path: "a.b.0.c" | [paths shown as "x / y"], unit?,
// target?: {atLeast | atMost}, targetPath?: the path the target is checked on (default: the first)}.
const { readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const RESULTS = join(ROOT, 'bench', 'results');
const PAGE = join(ROOT, 'docs', 'performance.md');

function valueAt(result, path, file) {
  const value = path.split('.').reduce((at, part) => (at === null || at === undefined ? undefined : at[part]), result);
  if (typeof value !== 'number') throw new Error(`${file}: the figure's path ${path} names no number in result`);
  return value;
}

const number = (x) => x.toLocaleString('en-US', { maximumFractionDigits: 2 });

function targetText(target, unit) {
  if (!target) return '–';
  const suffix = unit ? ` ${unit}` : '';
  if (target.atLeast !== undefined) return `≥ ${number(target.atLeast)}${suffix}`;
  if (target.atMost !== undefined) return `≤ ${number(target.atMost)}${suffix}`;
  throw new Error(`a target is {atLeast} or {atMost}, not ${JSON.stringify(target)}`);
}

function met(target, value) {
  if (!target) return '';
  return (target.atLeast !== undefined ? value >= target.atLeast : value <= target.atMost) ? 'yes' : 'no';
}

function row(figure, result, file) {
  const paths = Array.isArray(figure.path) ? figure.path : [figure.path];
  const values = paths.map((p) => valueAt(result, p, file));
  const shown = `${values.map(number).join(' / ')}${figure.unit ? ` ${figure.unit}` : ''}`;
  const checked = figure.targetPath ? valueAt(result, figure.targetPath, file) : values[0];
  return `| ${figure.measure} | ${shown} | ${targetText(figure.target, figure.unit)} | ${met(figure.target, checked)} |`;
}

function section(file) {
  const doc = JSON.parse(readFileSync(join(RESULTS, file), 'utf8'));
  for (const field of ['benchmark', 'command', 'date', 'machine', 'what', 'figures', 'result']) {
    if (doc[field] === undefined) throw new Error(`${file}: no ${field}`);
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(doc.date)) throw new Error(`${file}: date ${doc.date} is not YYYY-MM-DD`);
  if (!doc.figures.length) throw new Error(`${file}: no figures`);
  return [
    `## ${doc.benchmark}`,
    '',
    `\`${doc.command}\` · ${doc.date} · ${doc.machine}`,
    '',
    doc.what,
    '',
    '| Measure | Value | Target | Met |',
    '|---|---|---|---|',
    ...doc.figures.map((figure) => row(figure, doc.result, file)),
    ...(doc.notes ? ['', doc.notes] : []),
    '',
  ].join('\n');
}

/** The page, from every result file in name order. */
function render() {
  const files = readdirSync(RESULTS).filter((f) => f.endsWith('.json')).sort();
  return [
    '# Performance',
    '',
    'The latest result of each benchmark, written by `node scripts/bench-table.js` from',
    '`bench/results/*.json` (do not edit this page: a test fails when it differs from what the script',
    'writes). Each table gives the command that produced it, the date and the machine; earlier results',
    'are in git history. To record a run, put the JSON that `npm run bench -- <name>` prints into the',
    "file's `result` (keeping the fields its `figures` name), update `command`, `date` and `machine`, and",
    'run the script. Wall-clock rates depend on the machine and on what else runs on it: compare',
    'figures measured side by side (the yardsticks and floors in the same runs), not across dates.',
    '',
    ...files.map(section),
  ].join('\n');
}

module.exports = { render, PAGE };

if (require.main === module) {
  const page = render();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(PAGE, 'utf8');
    } catch {
      // no page yet: not current
    }
    if (current !== page) {
      console.error('docs/performance.md is not current: run node scripts/bench-table.js');
      process.exit(1);
    }
  } else {
    writeFileSync(PAGE, page);
    console.log(`wrote ${PAGE}`);
  }
}
