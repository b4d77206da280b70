#!/usr/bin/env node
// Bundles the API pages (api-pages/) into dist/docs (the API reference: Scalar) and
// dist/graphql-explorer (GraphiQL with React and Monaco's workers), from the npm packages in
// node_modules. Nothing is fetched at run time.
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const DIST = join(ROOT, 'dist');
const SOURCES = join(ROOT, 'api-pages');

const COMMON = {
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  loader: { '.css': 'css', '.ttf': 'file', '.woff2': 'file' },
  // The libraries' production builds (React, Vue).
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  logLevel: 'error',
};

/**
 * Bundles a page's scripts into `outdir` beside its index.html: both pages share one HTML shell
 * (api-pages/page.html), given here its title and the path it is served under; the host fills in
 * the response's CSP nonce and its own name.
 */
async function buildPage({ title, root }, entryPoints, outdir) {
  const esbuild = require('esbuild');
  mkdirSync(outdir, { recursive: true });
  await esbuild.build({ ...COMMON, entryPoints, outdir });
  const page = readFileSync(join(SOURCES, 'page.html'), 'utf8').replaceAll('__PAGE_TITLE__', title).replaceAll('__PAGE_ROOT__', root);
  writeFileSync(join(outdir, 'index.html'), page);
  return outdir;
}

/** /docs: Scalar's API reference. */
function buildApiReference(outdir = join(DIST, 'docs')) {
  return buildPage({ title: 'API reference', root: '/docs' }, { csp: join(SOURCES, 'docs', 'csp.js'), app: join(SOURCES, 'docs', 'main.js') }, outdir);
}

/** The GraphQL explorer: GraphiQL, and the workers of Monaco's editor, JSON and GraphQL language services. */
function buildGraphqlExplorer(outdir = join(DIST, 'graphql-explorer')) {
  return buildPage(
    { title: 'GraphQL explorer', root: '/graphql/explorer' },
    {
      csp: join(SOURCES, 'strict-csp.js'),
      app: join(SOURCES, 'explorer', 'main.js'),
      'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
      'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
      'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
    },
    outdir,
  );
}

function buildApiPages() {
  return Promise.all([buildApiReference(), buildGraphqlExplorer()]);
}

module.exports = { buildApiReference, buildGraphqlExplorer, buildApiPages };

if (require.main === module) {
  buildApiPages().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
