import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';

// Monaco's language services run in workers built next to this script (scripts/build-api-pages.js).
globalThis.MonacoEnvironment = {
  getWorker(_id, label) {
    const name = label === 'json' || label === 'graphql' ? label : 'editor';
    return new Worker(`/graphql/explorer/${name}.worker.js`);
  },
};

// Credentials are the caller's: pasted into the Headers tab, sent only to this host, kept in this
// browser's storage by GraphiQL like the rest of its tabs, never on the server.
const initialHeaders = JSON.stringify({ apiKey: '', orgId: '' }, null, 2);
const defaultQuery = `# Paste an API key and its organisation into Headers below (or
# {"Authorization": "Bearer <access token>"}), then run with Ctrl-Enter.
query {
  __typename
}
`;

createRoot(document.getElementById('app')).render(
  createElement(GraphiQL, { fetcher: createGraphiQLFetcher({ url: '/graphql' }), initialHeaders, defaultQuery, defaultEditorToolsVisibility: 'headers' }),
);
