import type { RouteRow } from '../route-table';

const TAG = 'Agents';

/** Agents, their wallets, policies and payments (/v1/agents). */
export const agentRoutes: RouteRow[] = [
  { method: 'POST', path: '/v1/agents', field: 'createAgent', body: 'input', envelope: 'single', status: 201, summary: "Create an agent (admin): the response carries its API key (scope 'agent') once; only its prefix is kept", tag: TAG },
  { method: 'GET', path: '/v1/agents', field: 'agents', envelope: 'coreList', summary: 'List agents, newest first (status, from, to, limit, offset); an agent key sees itself only', tag: TAG },
  { method: 'GET', path: '/v1/agents/{id}', field: 'agent', envelope: 'single', summary: "Get an agent (read scope, or the agent's own key)", tag: TAG },
  { method: 'PATCH', path: '/v1/agents/{id}', field: 'updateAgent', body: 'input', envelope: 'single', summary: 'Update name, description or metadata (admin)', tag: TAG },
  { method: 'POST', path: '/v1/agents/{id}/suspend', field: 'suspendAgent', envelope: 'single', summary: "Suspend an agent (admin; an admin access token too): its key is revoked at once and its payments refused", tag: TAG },
  { method: 'POST', path: '/v1/agents/{id}/resume', field: 'resumeAgent', envelope: 'single', summary: 'Reactivate a suspended agent (admin, with the API key itself: an access token cannot issue keys) with a new key, returned in this response only', tag: TAG },
  { method: 'DELETE', path: '/v1/agents/{id}', field: 'deleteAgent', envelope: 'single', summary: 'Delete an agent (admin; an admin access token too): key revoked, wallets deactivated, payments kept on record', tag: TAG },

  { method: 'POST', path: '/v1/agents/{agentId}/wallets/create', field: 'createAgentWallet', body: 'input', envelope: 'single', status: 201, summary: "Create an agent wallet (organisation admin only): a new address under a master wallet enabled on blockchainId (masterWalletId to choose one), linked to the agent", tag: TAG },
  { method: 'GET', path: '/v1/agents/{agentId}/wallets', field: 'agentWallets', envelope: 'coreList', summary: "The agent's wallets, newest first", tag: TAG },
  { method: 'GET', path: '/v1/agents/{agentId}/wallets/{walletId}', field: 'agentWallet', params: { walletId: 'id' }, envelope: 'single', summary: 'One agent wallet with its address', tag: TAG },

  { method: 'GET', path: '/v1/agents/{agentId}/policy', field: 'agentPolicy', envelope: 'single', summary: "The agent's spending policy; data is null when it has none (every payment is then denied)", tag: TAG },
  { method: 'PUT', path: '/v1/agents/{agentId}/policy', field: 'setAgentPolicy', body: 'input', envelope: 'single', summary: 'Replace the policy (admin): allowed chains and assets, recipient allow and deny lists, limits per payment and per rolling window in asset units and USD, approval thresholds. Audited', tag: TAG },
  { method: 'GET', path: '/v1/agents/{agentId}/policy/changes', field: 'agentPolicyChanges', envelope: 'coreList', summary: 'The audit trail of policy changes, newest first: version, the key that changed it, the rules before and after', tag: TAG },

  { method: 'POST', path: '/v1/agents/{agentId}/payments', field: 'requestAgentPayment', body: 'input', envelope: 'single', status: 201, summary: "Request a payment (the agent's own key only): evaluated by the policy before anything is signed; POLICY_DENIED with denialReason, PENDING approval, or APPROVED and sent", tag: TAG },
  { method: 'GET', path: '/v1/agents/{agentId}/payments', field: 'agentPayments', envelope: 'coreList', summary: "The agent's payments (agentWalletId, status, from, to, sort ASC|DESC by creation time, limit, offset)", tag: TAG },
  { method: 'GET', path: '/v1/agents/{agentId}/payments/{paymentId}', field: 'agentPayment', params: { paymentId: 'id' }, envelope: 'single', summary: 'One payment with its policy evaluation and transaction hash', tag: TAG },
  { method: 'POST', path: '/v1/agents/{agentId}/payments/{paymentId}/approve', field: 'approveAgentPayment', params: { paymentId: 'id' }, envelope: 'single', summary: "Approve a PENDING payment (admin): the agent's current policy is evaluated again against what its window has let go by now, the recipient screened again; the payment is then sent (APPROVED), or POLICY_DENIED with the policy's denialReason", tag: TAG },
  { method: 'POST', path: '/v1/agents/{agentId}/payments/{paymentId}/reject', field: 'rejectAgentPayment', params: { paymentId: 'id' }, body: 'input', envelope: 'single', summary: 'Reject a PENDING payment (admin): POLICY_DENIED, the reason recorded', tag: TAG },
];
