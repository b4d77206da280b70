#!/usr/bin/env node
'use strict';
/**
 * Copies the static files that live next to the TypeScript sources (the hosted checkout page:
 * src/modules/payment-links/checkout-page/) into dist, where the compiled modules read them.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DIRS = ['src/modules/payment-links/checkout-page'];

let copied = 0;
for (const dir of DIRS) {
  const from = path.join(ROOT, dir);
  const to = path.join(ROOT, 'dist', dir);
  fs.mkdirSync(to, { recursive: true });
  for (const name of fs.readdirSync(from)) {
    fs.copyFileSync(path.join(from, name), path.join(to, name));
    copied++;
  }
}
console.log(`copy-static: ${copied} files`);
