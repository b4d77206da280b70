#!/usr/bin/env node
// `node scripts/profile-summary.js <file.cpuprofile> [functions]`: where a process's CPU went while
// it was busy. Reads a profile written by `BENCH_CPU_PROF=<dir> npm run bench -- <name>` (each
// benchmark process profiled whole), keeps only the seconds in which the process was more than 80%
// busy after start-up (the measured load, not start-up or the waits between runs; BUSY_SHARE=0.6 lowers
// that bar for a load that waits on the database), and prints self time by package and by function, as
// percentages of those seconds' samples.
const { readFileSync } = require('node:fs');

const [file, functions = '30'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/profile-summary.js <file.cpuprofile> [functions]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
let t = profile.startTime;
const second = profile.timeDeltas.map((d) => Math.floor(((t += d) - profile.startTime) / 1e6));

const samples = new Map();
const busy = new Map();
profile.samples.forEach((id, i) => {
  samples.set(second[i], (samples.get(second[i]) ?? 0) + 1);
  if (nodes.get(id).functionName !== '(idle)') busy.set(second[i], (busy.get(second[i]) ?? 0) + 1);
});
const share = (s) => (busy.get(s) ?? 0) / samples.get(s);
// Start-up (loading modules, migrating) is busy too: it ends at the first second mostly spent waiting.
const started = Math.min(...[...samples.keys()].filter((s) => share(s) < 0.5));
const loaded = new Set([...samples.keys()].filter((s) => s > started && share(s) > Number(process.env.BUSY_SHARE ?? 0.8)));

const packageOf = ({ url, functionName }) => {
  if (url.includes('node_modules/')) return url.replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, '$1');
  if (url.includes('/dist/')) return `keel:${url.replace(/.*\/dist\/([^/]+\/[^/]+).*/, '$1')}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return functionName || '(native)';
};
const functionOf = ({ url, functionName, lineNumber }) => `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${lineNumber}`;

const byPackage = new Map();
const byFunction = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  if (!loaded.has(second[i])) return;
  total++;
  const frame = nodes.get(id);
  byPackage.set(packageOf(frame), (byPackage.get(packageOf(frame)) ?? 0) + 1);
  byFunction.set(functionOf(frame), (byFunction.get(functionOf(frame)) ?? 0) + 1);
});
const show = (counts, n) =>
  [...counts].sort((a, b) => b[1] - a[1]).slice(0, n).forEach(([name, c]) => console.log(`${((100 * c) / total).toFixed(1).padStart(5)}  ${name}`));
console.log(`${loaded.size} busy seconds, ${total} samples`);
console.log('--- self time by package');
show(byPackage, 30);
console.log('--- self time by function');
show(byFunction, Number(functions));
