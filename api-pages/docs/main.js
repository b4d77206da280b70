import { createApiReference } from '@scalar/api-reference';
import '@scalar/api-reference/style.css';
import './contrast.css';
import { keepComboboxStates } from './combobox-state.js';

// This host's own OpenAPI document; nothing is fetched from anywhere else: no web fonts (the
// system's), no proxy (requests go straight to this host), none of Scalar's hosted services (the AI
// agent, MCP, the developer tools' SDK generator).
createApiReference('#app', {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  proxyUrl: undefined,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
});

keepComboboxStates(document.body);
