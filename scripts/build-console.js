#!/usr/bin/env node
// Bundles the console (console/) into dist/console: index.html, app.js and app.css, from the npm
// packages in node_modules (preact, htm, uPlot, graphql-ws). Nothing is fetched at run time.
const { mkdirSync, copyFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const OUT = join(ROOT, 'dist', 'console');

async function buildConsole(outdir = OUT) {
  const esbuild = require('esbuild');
  mkdirSync(outdir, { recursive: true });
  await esbuild.build({
    entryPoints: { app: join(ROOT, 'console', 'src', 'main.js') },
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['chrome110', 'firefox110', 'safari16'],
    outdir,
    loader: { '.css': 'css' },
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(ROOT, 'console', 'index.html'), join(outdir, 'index.html'));
  return outdir;
}

module.exports = { buildConsole, CONSOLE_OUT: OUT };

if (require.main === module) {
  buildConsole().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
