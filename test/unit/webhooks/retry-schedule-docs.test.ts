import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../src/platform/config';

const read = (file: string) => readFileSync(join(__dirname, '../../..', file), 'utf8').replace(/\s+/g, ' ');
const schedule = loadConfig({}).WEBHOOK_RETRY_SCHEDULE_MS;
const UNITS: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000 };

test("the guide lists the default retry schedule, the spec's", () => {
  const listed = /the next attempt after ([^(]+) \((\d+) attempts; `WEBHOOK_RETRY_SCHEDULE_MS`\)/.exec(read('docs/webhooks.md'));
  const delays = listed![1].split(', ').map((d) => (d === '0' ? 0 : Number(d.split(' ')[0]) * UNITS[d.split(' ')[1]]));
  expect(delays).toEqual(schedule);
  expect(Number(listed![2])).toBe(schedule.length);
  expect(schedule).toEqual([0, 5_000, 30_000, 300_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000]);
});

test('the guide and the README say how long a failing delivery is retried: what the default schedule spans, not days', () => {
  const minutes = Math.round(schedule.reduce((a, b) => a + b, 0) / 60_000);
  const span = `${schedule.length} attempts over ${Math.floor(minutes / 60)} h ${minutes % 60} min by default`;
  for (const file of ['docs/webhooks.md', 'README.md']) {
    expect(read(file)).toContain(span);
    expect(read(file)).not.toMatch(/retr\w+ (failures )?for days/);
  }
});
