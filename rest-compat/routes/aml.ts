import type { RouteRow } from '../route-table';

/** AML screening (core host). */
export const amlRoutes: RouteRow[] = [
  { method: 'POST', path: '/v1/aml/check-batch', field: 'amlCheckBatch', body: 'input', envelope: 'raw', summary: 'Screen 1 to 50 addresses against the sanctions lists in use (OFAC SDN digital currency addresses; EVM addresses in any case): `{data: [{address, isSanctioned, identifications}], totalChecked, screenedAgainst}`', tag: 'AML' },
  { method: 'GET', path: '/v1/aml/lists', field: 'amlLists', envelope: 'single', summary: 'The sanctions lists in use: source, list date, sizes (a newer list is loaded with `keel aml load`)', tag: 'AML' },
  { method: 'GET', path: '/v1/aml/flagged-transfers', field: 'amlFlaggedTransfers', envelope: 'coreList', summary: 'Incoming transfers from sanctioned addresses, newest first (released true|false, limit, offset); each holds its address from auto-sweep until released', tag: 'AML' },
  { method: 'GET', path: '/v1/aml/flagged-transfers/{id}', field: 'amlFlaggedTransfer', envelope: 'single', summary: 'One flagged incoming transfer', tag: 'AML' },
  { method: 'POST', path: '/v1/aml/flagged-transfers/{id}/release', field: 'releaseAmlFlaggedTransfer', body: 'input', envelope: 'single', summary: "Release a flagged transfer's hold on auto-sweep after review: `{note}` (admin scope; 409 if already released)", tag: 'AML' },
];
