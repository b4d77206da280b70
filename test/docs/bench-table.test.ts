import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/performance.md is generated from the committed benchmark results: it must be what
 * `node scripts/bench-table.js` writes from bench/results/*.json today, so a result recorded
 * without regenerating the page (or a page edited by hand) fails here.
 */
const { render, PAGE } = require('../../scripts/bench-table.js') as { render(): string; PAGE: string };
const RESULTS = join(__dirname, '..', '..', 'bench', 'results');

test('docs/performance.md is the table the script makes of bench/results', () => {
  expect(readFileSync(PAGE, 'utf8')).toBe(render());
});

test('every result says which command, machine and date it comes from, and has a table per benchmark', () => {
  const page = render();
  for (const file of readdirSync(RESULTS).filter((f) => f.endsWith('.json'))) {
    const result = JSON.parse(readFileSync(join(RESULTS, file), 'utf8'));
    expect(result.command).toMatch(/^npm run bench -- /);
    expect(result.machine).toEqual(expect.any(String));
    expect(result.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(page).toContain(`## ${result.benchmark}\n\n\`${result.command}\` · ${result.date} · ${result.machine}`);
  }
});
