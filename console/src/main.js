// Keel's built-in console: a reference client of the public GraphQL API (see README, "Console").
import './console.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { host, loadSession, saveSession, signInWithKey, signInWithToken, useSessionHandlers } from './api.js';
import { html, ErrorNote, Field, formValues, useAction } from './ui.js';
import { closeLive, subscribe, watchConnection } from './live.js';
import { OrganizationPage, WalletsPage, ActivityPage, ApprovalsPage, WebhooksPage } from './core-pages.js';
import { MarketsPage, OrdersPage } from './book-pages.js';

const PAGES = {
  core: [
    { path: 'organization', title: 'Organisation and keys', Page: OrganizationPage },
    { path: 'wallets', title: 'Wallets', Page: WalletsPage },
    { path: 'activity', title: 'Deposits and withdrawals', Page: ActivityPage },
    { path: 'approvals', title: 'Approvals', Page: ApprovalsPage },
    { path: 'webhooks', title: 'Webhooks', Page: WebhooksPage },
  ],
  pro: [
    { path: 'markets', title: 'Markets', Page: MarketsPage },
    { path: 'orders', title: 'My orders', Page: OrdersPage },
  ],
}[host];

const routeOf = () => {
  const path = location.hash.replace(/^#\/?/, '');
  return PAGES.find((p) => p.path === path) ?? PAGES[0];
};

function SignIn({ onSignedIn, reason }) {
  const [mode, setMode] = useState('key');
  const action = useAction(onSignedIn);
  const submit = (e) => {
    const v = formValues(e);
    e.currentTarget.reset();
    action.run(() => (mode === 'key' ? signInWithKey(v.apiKey, v.orgId) : signInWithToken(v.token)));
  };
  return html`<main id="main" class="signin">
    <h1>Keel console <small>(${host === 'core' ? 'core' : 'order book'})</small></h1>
    ${reason && html`<p class="error" role="alert">${reason}</p>`}
    <fieldset class="switch">
      <legend>Sign in with</legend>
      <label><input type="radio" name="mode" checked=${mode === 'key'} onChange=${() => setMode('key')} /> an API key</label>
      <label><input type="radio" name="mode" checked=${mode === 'token'} onChange=${() => setMode('token')} /> an access token</label>
    </fieldset>
    <form class="card" onSubmit=${submit} aria-label="Sign in">
      ${mode === 'key'
        ? html`<p class="hint">The key is used once to mint a token valid for an hour (or Keel’s default lifetime where the operator allows no token that long), and is not stored.</p>
          <${Field} id="signin-key" label="API key"><input id="signin-key" name="apiKey" type="password" autocomplete="off" required /><//>
          <${Field} id="signin-org" label="Organisation id"><input id="signin-org" name="orgId" autocomplete="off" required /><//>`
        : html`<${Field} id="signin-token" label="Access token"><textarea id="signin-token" name="token" rows="4" required></textarea><//>`}
      <button type="submit" disabled=${action.busy}>Sign in</button>
      <${ErrorNote} error=${action.error} />
    </form>
  </main>`;
}

function App() {
  const [session, setSession] = useState(loadSession);
  const [reason, setReason] = useState(null);
  const [route, setRoute] = useState(routeOf);
  const [wallet, setWallet] = useState(null);
  const [market, setMarket] = useState(null);
  const [tick, setTick] = useState(0);
  const [live, setLive] = useState('offline');
  const [events, setEvents] = useState([]);
  const heading = useRef(null);

  const signOut = (why = null) => {
    closeLive();
    saveSession(null);
    setSession(null);
    setReason(why);
  };
  useSessionHandlers(session, signOut);

  useEffect(() => {
    const onHash = () => setRoute(routeOf());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    document.title = `${route.title} · Keel console`;
    heading.current?.focus();
  }, [route]);
  useEffect(() => {
    if (!session) return undefined;
    const timer = setTimeout(() => signOut('The access token expired: sign in again.'), Date.parse(session.expiresAt) - Date.now());
    return () => clearTimeout(timer);
  }, [session]);
  useEffect(
    () =>
      session
        ? watchConnection(session.token, (status, reason) => {
            if (status === 'refused') signOut(reason || 'Keel refused the session: sign in again.');
            else setLive(status);
          })
        : undefined,
    [session],
  );
  // The core host's live feed: every committed event refreshes the pages that show it.
  useEffect(() => {
    if (!session || host !== 'core') return undefined;
    return subscribe(session.token, 'subscription ConsoleEvents { events { id type timestamp data } }', {}, ({ events: event }) => {
      setEvents((list) => [event, ...list].slice(0, 20));
      setTick((t) => t + 1);
    });
  }, [session]);

  if (!session)
    return html`<${SignIn} reason=${reason} onSignedIn=${(s) => {
      saveSession(s);
      setReason(null);
      setSession(s);
    }} />`;
  const { Page } = route;
  return html`<a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <p class="brand" ref=${heading} tabindex="-1"><strong>Keel</strong> ${host === 'core' ? 'console' : 'order book'}</p>
      <nav aria-label="Pages"><ul>
        ${PAGES.map((p) => html`<li><a href=${`#/${p.path}`} aria-current=${p === route ? 'page' : undefined}>${p.title}</a></li>`)}
      </ul></nav>
      <div class="who">
        <span class=${`live ${live}`} role="status" data-testid="live-status">${live === 'live' ? 'Live' : 'Offline'}</span>
        <button type="button" onClick=${() => signOut()}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1">
      <h1 class="visually-hidden">Keel ${host === 'core' ? 'console' : 'order-book console'}</h1>
      <${Page} wallet=${wallet} setWallet=${setWallet} market=${market} setMarket=${setMarket} tick=${tick} />
      ${host === 'core' && html`<aside class="feed" aria-labelledby="feed-title">
        <h2 id="feed-title">Latest events</h2>
        <ol aria-live="polite">${events.length === 0 ? html`<li>None since sign-in</li>` : events.map((e) => html`<li key=${e.id}><code>${e.type}</code> ${new Date(e.timestamp).toLocaleTimeString()}</li>`)}</ol>
      </aside>`}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));
