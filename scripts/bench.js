#!/usr/bin/env node
// `npm run bench -- <name> [args]`: runs dist/bench/<name>.js and prints its JSON result.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const [name, ...args] = process.argv.slice(2);
const file = name && join(__dirname, '..', 'dist', 'bench', `${name}.js`);
if (!file || !existsSync(file)) {
  console.error(`usage: npm run bench -- <name>; built benchmarks: ${require('node:fs').readdirSync(join(__dirname, '..', 'dist', 'bench')).filter((f) => f.endsWith('.js') && !f.startsWith('support')).map((f) => f.replace(/\.js$/, '')).join(', ')}`);
  process.exit(2);
}
require(file)
  .run(args)
  .then((result) => {
    console.log(JSON.stringify(result, null, 2));
    process.exit(0);
  })
  .catch((e) => {
    console.error(e);
    process.exit(1);
  });
