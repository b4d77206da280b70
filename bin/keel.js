#!/usr/bin/env node
const { existsSync } = require('node:fs');
const { join } = require('node:path');

// The command line is the compiled build; a checkout that was never built gets one line, not a stack.
const main = join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(`keel: this checkout is not built (no ${join('dist', 'src', 'cli', 'main.js')}): run \`npm install\` in ${join(__dirname, '..')}, which builds it\n`);
  process.exit(1);
}
require(main);
