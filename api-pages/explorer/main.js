import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';
import './page.css';

// Monaco's language services run in workers built next to this script (scripts/build-api-pages.js).
globalThis.MonacoEnvironment = {
  getWorker(_id, label) {
    const name = label === 'json' || label === 'graphql' ? label : 'editor';
    return new Worker(`/graphql/explorer/${name}.worker.js`);
  },
};

// Credentials are the caller's: pasted into the Headers tab, sent only to this host, kept in this
// browser's storage by GraphiQL like the rest of its tabs, never on the server. Without them the
// explorer does not call the host (which would answer 401), it says what to paste.
const toHost = createGraphiQLFetcher({ url: '/graphql' });
const CREDENTIALS = ['apikey', 'authorization'];
const withCredentials = (headers) => Object.entries(headers ?? {}).some(([name, value]) => CREDENTIALS.includes(name.toLowerCase()) && String(value).trim() !== '');
const fetcher = (params, options) =>
  withCredentials(options?.headers)
    ? toHost(params, options)
    : Promise.resolve({ errors: [{ message: 'Paste {"apiKey": "…", "orgId": "…"} or {"Authorization": "Bearer <access token>"} into Headers, then run again (and re-fetch the schema for completion and docs).' }] });

const defaultQuery = `# Paste an API key and its organisation into Headers below, then run with Ctrl-Enter.
{
  organization {
    id
    name
  }
}
`;

createRoot(document.getElementById('app')).render(
  createElement(GraphiQL, { fetcher, defaultQuery, initialHeaders: '{\n  "apiKey": "",\n  "orgId": ""\n}', defaultEditorToolsVisibility: 'headers' }),
);
