// The console's only way to Keel: the public GraphQL API of the host that served the page, with a
// short-lived access token (Authorization: Bearer). A pasted API key is used once, to mint a token
// with createAccessToken, and is never stored; the token lives in sessionStorage (this tab only).
const STORE = 'keel.console.session';

export const host = document.querySelector('meta[name="keel-host"]')?.getAttribute('content') === 'pro' ? 'pro' : 'core';

export class ApiError extends Error {
  constructor(message, code, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

export function loadSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(STORE) ?? 'null');
    if (s && s.host === host && typeof s.token === 'string' && Date.parse(s.expiresAt) > Date.now()) return s;
  } catch {
    // a damaged entry: sign in again
  }
  sessionStorage.removeItem(STORE);
  return null;
}

export function saveSession(s) {
  if (s) sessionStorage.setItem(STORE, JSON.stringify(s));
  else sessionStorage.removeItem(STORE);
}

let current = null;
/** The signed-in session's token (for graphql-ws). */
export const currentToken = () => current?.token ?? null;
let onSignedOut = () => {};
export function useSessionHandlers(session, signedOut) {
  current = session;
  onSignedOut = signedOut;
}

async function post(headers, query, variables) {
  let res;
  try {
    res = await fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
  } catch {
    throw new ApiError('Keel cannot be reached', 'NETWORK', 0);
  }
  const body = await res.json().catch(() => ({}));
  const first = body.errors?.[0] ?? body.error;
  if (first) throw new ApiError(first.message ?? 'Request failed', first.extensions?.code ?? first.code, res.status);
  if (!res.ok) throw new ApiError(`Keel answered ${res.status}`, 'HTTP', res.status);
  return body.data;
}

/** A GraphQL request with the session's token; a 401 (expired or revoked token) signs out. */
export async function gql(query, variables = {}) {
  if (!current) throw new ApiError('Not signed in', 'UNAUTHORIZED', 401);
  try {
    return await post({ authorization: `Bearer ${current.token}` }, query, variables);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) onSignedOut(e.message);
    throw e;
  }
}

/**
 * A GraphQL request sent with an API key instead of the session's token: key administration
 * (create, rotate, revoke) needs the key itself, never a token. The key is used for this one request
 * and never kept.
 */
export async function gqlWithKey(apiKey, query, variables = {}) {
  if (!current?.organizationId) throw new ApiError('Sign in with a key to administer keys', 'UNAUTHORIZED', 401);
  if (!apiKey.trim()) throw new ApiError('Enter your admin API key: creating, rotating and revoking keys needs the key itself, not the console’s token', 'FORBIDDEN', 403);
  return post({ apikey: apiKey.trim(), orgid: current.organizationId }, query, variables);
}

const MINT = `mutation Mint($input: CreateAccessTokenInput) {
  createAccessToken(input: $input) { token expiresAt organizationId scopes host }
}`;

/** How long a console session asks to last; a host whose longest token lifetime is shorter gives its default. */
const SESSION_SECONDS = 3600;

/**
 * Exchanges an API key (used for this one request, never kept) for a token of an hour, or, where the
 * host allows no token that long (ACCESS_TOKEN_MAX_TTL_SECONDS), of the host's default lifetime.
 */
export async function signInWithKey(apiKey, orgId) {
  const headers = { apikey: apiKey.trim(), orgid: orgId.trim() };
  const data = await post(headers, MINT, { input: { ttlSeconds: SESSION_SECONDS } }).catch((e) => {
    if (e instanceof ApiError && e.code === 'INVALID_FIELD' && /ttlSeconds/.test(e.message)) return post(headers, MINT, { input: {} });
    throw e;
  });
  const t = data.createAccessToken;
  return { host, token: t.token, expiresAt: t.expiresAt, organizationId: t.organizationId, scopes: t.scopes };
}

/** A token minted elsewhere (by a server holding the key): checked with a harmless query. */
export async function signInWithToken(token) {
  const s = { host, token: token.trim(), expiresAt: new Date(Date.now() + 3600_000).toISOString(), organizationId: null, scopes: [] };
  try {
    const payload = JSON.parse(atob(s.token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    if (payload.exp) s.expiresAt = new Date(payload.exp * 1000).toISOString();
    s.organizationId = payload.sub ?? null;
    s.scopes = payload.scp ?? [];
  } catch {
    throw new ApiError('That is not an access token', 'INVALID_TOKEN', 401);
  }
  await post({ authorization: `Bearer ${s.token}` }, host === 'core' ? '{ organization { id } }' : '{ markets(limit: 1) { total } }', {});
  return s;
}
