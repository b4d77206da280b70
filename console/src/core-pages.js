// The core host's pages: organisation and keys, wallets, deposits and withdrawals, approvals, webhooks.
import { useState } from 'preact/hooks';
import { gql, gqlWithKey } from './api.js';
import { html, useQuery, useAction, ErrorNote, Field, formValues, when, short, Table, SecretOnce } from './ui.js';

const KEY_FIELDS = 'id name prefix host scopes tier status createdAt lastRotatedAt revokedAt';

export function OrganizationPage() {
  const org = useQuery('{ organization { id name tier proAccess createdAt } }', {});
  const keys = useQuery(`query Keys { apiKeys(limit: 100, offset: 0) { items { ${KEY_FIELDS} } } }`, {});
  const [secret, setSecret] = useState(null);
  // Key changes go with the admin key itself (a token may not create, rotate or revoke keys); it is
  // kept in this page's memory only while the page is open, never stored.
  const [adminKey, setAdminKey] = useState('');
  const action = useAction(() => keys.reload());
  const withKey = (query, variables) => gqlWithKey(adminKey, query, variables);
  const create = (e) => {
    const v = formValues(e);
    const scopes = v.scopes.split(',').map((s) => s.trim()).filter(Boolean);
    const form = e.currentTarget;
    action.run(async () => {
      const d = await withKey(`mutation CreateKey($input: CreateApiKeyInput!) { createApiKey(input: $input) { id name secret } }`, { input: { name: v.name, host: v.host, scopes } });
      setSecret({ title: `Secret of the new key “${d.createApiKey.name}”`, value: d.createApiKey.secret });
      form.reset();
    });
  };
  const rotate = (k) =>
    action.run(async () => {
      const d = await withKey(`mutation Rotate($id: ID!) { rotateApiKey(id: $id) { id name secret } }`, { id: k.id });
      setSecret({ title: `New secret of “${d.rotateApiKey.name}”`, value: d.rotateApiKey.secret });
    });
  const revoke = (k) => {
    if (!window.confirm(`Revoke the key “${k.name}”? Its tokens stop working at once.`)) return;
    action.run(() => withKey(`mutation Revoke($id: ID!) { revokeApiKey(id: $id) { id status } }`, { id: k.id }));
  };
  const o = org.data?.organization;
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">Organisation and keys</h2>
    <${ErrorNote} error=${org.error} />
    ${o && html`<dl class="facts">
      <div><dt>Name</dt><dd>${o.name}</dd></div>
      <div><dt>Id</dt><dd><code>${o.id}</code></dd></div>
      <div><dt>Tier</dt><dd>${o.tier}</dd></div>
      <div><dt>Order book</dt><dd>${o.proAccess ? 'enabled' : 'not enabled'}</dd></div>
    </dl>`}
    ${secret && html`<${SecretOnce} title=${secret.title} secret=${secret.value} onDismiss=${() => setSecret(null)} />`}
    <${ErrorNote} error=${keys.error || action.error} />
    <div class="card">
      <${Field} id="admin-key" label="Admin API key" hint="Creating, rotating and revoking keys needs an admin key itself, not the console's token: it is sent with those requests only and never stored."><input id="admin-key" type="password" autocomplete="off" value=${adminKey} onInput=${(e) => setAdminKey(e.currentTarget.value)} aria-describedby="admin-key-hint" /><//>
    </div>
    <${Table} caption="API keys" rows=${keys.data?.apiKeys.items ?? []} columns=${[
      { label: 'Name', key: 'name' },
      { label: 'Prefix', render: (k) => html`<code>${k.prefix}</code>` },
      { label: 'Host', key: 'host' },
      { label: 'Scopes', render: (k) => k.scopes.join(', ') },
      { label: 'Status', key: 'status' },
      { label: 'Created', render: (k) => when(k.createdAt) },
      { label: 'Actions', render: (k) => (k.status === 'ACTIVE' ? html`<div class="actions">
          <button type="button" onClick=${() => rotate(k)} disabled=${action.busy} aria-label=${`Rotate ${k.name}`}>Rotate</button>
          <button type="button" class="danger" onClick=${() => revoke(k)} disabled=${action.busy} aria-label=${`Revoke ${k.name}`}>Revoke</button>
        </div>` : '—') },
    ]} />
    <form class="card" onSubmit=${create} aria-labelledby="new-key">
      <h3 id="new-key">New API key</h3>
      <${Field} id="key-name" label="Name"><input id="key-name" name="name" required maxlength="100" /><//>
      <${Field} id="key-host" label="Host"><select id="key-host" name="host"><option value="CORE">Core</option><option value="PRO">Order book</option></select><//>
      <${Field} id="key-scopes" label="Scopes (comma-separated)" hint="core: read, write, admin…; order book: orderbook_market:read, orderbook_order:create…"><input id="key-scopes" name="scopes" required defaultValue="read" aria-describedby="key-scopes-hint" /><//>
      <button type="submit" disabled=${action.busy}>Create key</button>
    </form>
  </section>`;
}

const WALLET_FIELDS = 'id name walletAddress blockchainId network isActive createdAt';

export function WalletsPage({ wallet, setWallet, tick }) {
  const wallets = useQuery(`query Wallets { masterWallets(limit: 100, offset: 0) { items { ${WALLET_FIELDS} } } }`, {});
  const chains = useQuery('{ blockchains(limit: 100, offset: 0, isActive: true) { items { id name network } } }', {});
  const action = useAction();
  const create = (e) => {
    const v = formValues(e);
    const form = e.currentTarget;
    action.run(async () => {
      const d = await gql(`mutation CreateWallet($input: CreateMasterWalletInput!) { createMasterWallet(input: $input) { ${WALLET_FIELDS} } }`, { input: { name: v.name, blockchainId: v.blockchainId } });
      form.reset();
      await wallets.reload();
      setWallet(d.createMasterWallet);
    });
  };
  const items = wallets.data?.masterWallets.items ?? [];
  const selected = wallet && items.find((w) => w.id === wallet.id);
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">Master wallets</h2>
    <${ErrorNote} error=${wallets.error || action.error} />
    <${Table} caption="Master wallets" rows=${items} rowAttrs=${(w) => ({ 'aria-current': selected?.id === w.id ? 'true' : undefined })} columns=${[
      { label: 'Name', key: 'name' },
      { label: 'Address', render: (w) => html`<code class="addr">${w.walletAddress}</code>` },
      { label: 'Network', key: 'network' },
      { label: 'Created', render: (w) => when(w.createdAt) },
      { label: 'Open', render: (w) => html`<button type="button" onClick=${() => setWallet(w)} aria-label=${`Open wallet ${w.name}`}>Open</button>` },
    ]} />
    <form class="card" onSubmit=${create} aria-labelledby="new-wallet">
      <h3 id="new-wallet">New master wallet</h3>
      <${Field} id="wallet-name" label="Name"><input id="wallet-name" name="name" required maxlength="100" /><//>
      <${Field} id="wallet-chain" label="Blockchain"><select id="wallet-chain" name="blockchainId" required>
        ${(chains.data?.blockchains.items ?? []).map((c) => html`<option value=${c.id}>${c.name} (${c.network})</option>`)}
      </select><//>
      <button type="submit" disabled=${action.busy}>Create wallet</button>
    </form>
    ${selected && html`<${WalletDetail} wallet=${selected} tick=${tick} />`}
  </section>`;
}

function WalletDetail({ wallet, tick }) {
  const balances = useQuery('query Balances($id: ID!) { masterWalletBalances(id: $id) { balance asset { id symbol } } }', { id: wallet.id }, [tick]);
  const addresses = useQuery('query Addresses($id: ID!) { addresses(masterWalletId: $id, limit: 100, offset: 0) { items { id name address derivationIndex createdAt } } }', { id: wallet.id });
  const [funded, setFunded] = useState(null);
  const action = useAction();
  const addAddress = (e) => {
    const v = formValues(e);
    const form = e.currentTarget;
    action.run(async () => {
      await gql('mutation AddAddress($id: ID!, $input: CreateAddressInput) { createAddress(masterWalletId: $id, input: $input) { id } }', { id: wallet.id, input: { name: v.name || null } });
      form.reset();
      await addresses.reload();
    });
  };
  const fund = (e) => {
    const v = formValues(e);
    action.run(async () => {
      const d = await gql('mutation Fund($input: DevFaucetInput!) { devFaucet(input: $input) { amount symbol to txHash } }', { input: { address: wallet.walletAddress, blockchainId: wallet.blockchainId, amount: v.amount, asset: v.asset || null } });
      setFunded(d.devFaucet);
    });
  };
  return html`<section class="detail" aria-labelledby="wallet-title">
    <h3 id="wallet-title">Wallet “${wallet.name}”</h3>
    <${ErrorNote} error=${balances.error || addresses.error || action.error} />
    <${Table} caption="Balances" rowKey=${(b) => b.asset.id} rows=${balances.data?.masterWalletBalances ?? []} columns=${[
      { label: 'Asset', render: (b) => b.asset.symbol },
      { label: 'Balance', key: 'balance' },
    ]} />
    <${Table} caption="Deposit addresses" rows=${addresses.data?.addresses.items ?? []} columns=${[
      { label: 'Name', render: (a) => a.name ?? '—' },
      { label: 'Address', render: (a) => html`<code class="addr">${a.address}</code>` },
      { label: 'Index', key: 'derivationIndex' },
    ]} />
    <div class="cards">
      <form class="card" onSubmit=${addAddress} aria-labelledby="new-address">
        <h4 id="new-address">New deposit address</h4>
        <${Field} id="address-name" label="Name (optional)"><input id="address-name" name="name" maxlength="100" /><//>
        <button type="submit" disabled=${action.busy}>Create address</button>
      </form>
      <form class="card" onSubmit=${fund} aria-labelledby="faucet">
        <h4 id="faucet">Dev faucet (development chains only)</h4>
        <${Field} id="faucet-amount" label="Amount"><input id="faucet-amount" name="amount" required inputmode="decimal" defaultValue="1" /><//>
        <${Field} id="faucet-asset" label="Asset"><select id="faucet-asset" name="asset"><option value="">Native coin</option><option>USDC</option><option>USDT</option></select><//>
        <button type="submit" disabled=${action.busy}>Fund this wallet</button>
        ${funded && html`<p role="status">Sent ${funded.amount} ${funded.symbol}: <code class="addr">${funded.txHash}</code>. It appears under Deposits once confirmed.</p>`}
      </form>
    </div>
  </section>`;
}

function WalletPicker({ wallet, setWallet }) {
  const wallets = useQuery('query WalletNames { masterWallets(limit: 100, offset: 0) { items { id name walletAddress blockchainId } } }', {});
  const items = wallets.data?.masterWallets.items ?? [];
  return html`<${Field} id="wallet-pick" label="Wallet">
    <select id="wallet-pick" value=${wallet?.id ?? ''} onChange=${(e) => setWallet(items.find((w) => w.id === e.currentTarget.value) ?? null)}>
      <option value="">All wallets</option>
      ${items.map((w) => html`<option value=${w.id}>${w.name}</option>`)}
    </select>
  <//>`;
}

const itemsText = (t) => t.items.map((i) => `${i.amount} ${i.asset.symbol} → ${i.recipient.slice(0, 10)}…`).join('; ');

export function ActivityPage({ wallet, setWallet, tick }) {
  const deposits = useQuery(
    'query Deposits($id: ID!) { masterWalletTransactions(id: $id, limit: 25, sort: "DESC", direction: "incoming") { totalCount transfer { id hash status symbol value from to timestamp direction } } }',
    { id: wallet?.id ?? '' },
    [tick],
  );
  const withdrawals = useQuery(
    'query Withdrawals($id: String) { transfers(limit: 25, offset: 0, masterWalletId: $id) { items { id kind status createdAt items { amount recipient txHash asset { symbol } } } } }',
    { id: wallet?.id ?? null },
    [tick],
  );
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">Deposits and withdrawals</h2>
    <p class="hint">Updated live from the <code>events</code> subscription.</p>
    <${WalletPicker} wallet=${wallet} setWallet=${setWallet} />
    ${wallet
      ? html`<${ErrorNote} error=${deposits.error} />
        <${Table} caption=${`Deposits to ${wallet.name}`} empty="No deposits yet" rows=${deposits.data?.masterWalletTransactions.transfer ?? []} rowAttrs=${(d) => ({ 'data-hash': d.hash })} columns=${[
          { label: 'When', render: (d) => when(d.timestamp) },
          { label: 'Amount', render: (d) => `${d.value} ${d.symbol}` },
          { label: 'From', render: (d) => html`<code class="addr">${d.from}</code>` },
          { label: 'Status', key: 'status' },
          { label: 'Transaction', render: (d) => html`<code class="addr">${d.hash}</code>` },
        ]} />`
      : html`<p>Choose a wallet to see its deposits.</p>`}
    <${ErrorNote} error=${withdrawals.error} />
    <${Table} caption="Withdrawals" empty="No withdrawals yet" rows=${withdrawals.data?.transfers.items ?? []} columns=${[
      { label: 'When', render: (t) => when(t.createdAt) },
      { label: 'Kind', key: 'kind' },
      { label: 'Items', render: itemsText },
      { label: 'Status', key: 'status' },
    ]} />
  </section>`;
}

export function ApprovalsPage({ tick }) {
  // A transfer held for approval is not an event of its own: the list also re-reads itself every 5 s.
  const held = useQuery('query Held { transfers(limit: 100, offset: 0, status: "PENDING_APPROVAL") { items { id kind status createdAt note masterWalletId items { amount recipient asset { symbol } } } } }', {}, [tick], 5000);
  const action = useAction(() => held.reload());
  const decide = (t, verb) => action.run(() => gql(`mutation Decide($id: ID!) { ${verb}Transfer(id: $id) { id status } }`, { id: t.id }));
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">Approvals</h2>
    <p class="hint">Transfers from wallets that require approval wait here until an admin decides.</p>
    <${ErrorNote} error=${held.error || action.error} />
    <${Table} caption="Transfers waiting for approval" empty="Nothing is waiting" rows=${held.data?.transfers.items ?? []} rowAttrs=${(t) => ({ 'data-transfer-id': t.id })} columns=${[
      { label: 'Requested', render: (t) => when(t.createdAt) },
      { label: 'Wallet', render: (t) => short(t.masterWalletId) },
      { label: 'Items', render: itemsText },
      { label: 'Note', render: (t) => t.note ?? '—' },
      { label: 'Decision', render: (t) => html`<div class="actions">
        <button type="button" onClick=${() => decide(t, 'approve')} disabled=${action.busy} aria-label=${`Approve transfer ${short(t.id)}`}>Approve</button>
        <button type="button" class="danger" onClick=${() => decide(t, 'reject')} disabled=${action.busy} aria-label=${`Reject transfer ${short(t.id)}`}>Reject</button>
      </div>` },
    ]} />
  </section>`;
}

export function WebhooksPage({ tick }) {
  const hooks = useQuery('query Hooks { webhooks(limit: 100, offset: 0) { items { id name url eventTypes isActive deactivationReason createdAt } } }', {});
  const [filter, setFilter] = useState('');
  const log = useQuery(
    'query Deliveries($sub: ID) { webhookEvents(limit: 25, offset: 0, subscriptionId: $sub) { items { id eventId type status attempts responseStatusCode errorMessage createdAt subscriptionId } } }',
    { sub: filter || null },
    [tick],
    3000,
  );
  const [secret, setSecret] = useState(null);
  const action = useAction(() => {
    hooks.reload();
    log.reload();
  });
  const create = (e) => {
    const v = formValues(e);
    const form = e.currentTarget;
    action.run(async () => {
      const eventTypes = v.eventTypes.split(',').map((s) => s.trim()).filter(Boolean);
      const d = await gql('mutation Hook($input: CreateWebhookInput!) { createWebhook(input: $input) { id name secret } }', { input: { name: v.name, url: v.url, eventTypes } });
      if (d.createWebhook.secret) setSecret({ title: `Signing secret of “${d.createWebhook.name}”`, value: d.createWebhook.secret });
      form.reset();
    });
  };
  const resend = (d) => action.run(() => gql('mutation Resend($id: ID!) { resendWebhookEvent(id: $id) { id status } }', { id: d.id }));
  return html`<section aria-labelledby="page-title">
    <h2 id="page-title">Webhooks</h2>
    ${secret && html`<${SecretOnce} title=${secret.title} secret=${secret.value} onDismiss=${() => setSecret(null)} />`}
    <${ErrorNote} error=${hooks.error || action.error} />
    <${Table} caption="Webhook subscriptions" rows=${hooks.data?.webhooks.items ?? []} columns=${[
      { label: 'Name', key: 'name' },
      { label: 'URL', render: (w) => html`<code class="addr">${w.url}</code>` },
      { label: 'Events', render: (w) => w.eventTypes.join(', ') },
      { label: 'Active', render: (w) => (w.isActive ? 'yes' : `no (${w.deactivationReason ?? 'deactivated'})`) },
      { label: 'Log', render: (w) => html`<button type="button" onClick=${() => setFilter(w.id)} aria-label=${`Show deliveries of ${w.name}`}>Deliveries</button>` },
    ]} />
    <form class="card" onSubmit=${create} aria-labelledby="new-hook">
      <h3 id="new-hook">New webhook subscription</h3>
      <${Field} id="hook-name" label="Name"><input id="hook-name" name="name" required maxlength="100" /><//>
      <${Field} id="hook-url" label="URL"><input id="hook-url" name="url" type="url" required placeholder="https://example.com/keel" /><//>
      <${Field} id="hook-events" label="Event types (comma-separated)"><input id="hook-events" name="eventTypes" required defaultValue="*" /><//>
      <button type="submit" disabled=${action.busy}>Create webhook</button>
    </form>
    <${ErrorNote} error=${log.error} />
    ${filter && html`<p>Showing one subscription's deliveries. <button type="button" onClick=${() => setFilter('')}>Show all</button></p>`}
    <${Table} caption="Delivery log" empty="No deliveries yet" rows=${log.data?.webhookEvents.items ?? []} rowAttrs=${(d) => ({ 'data-delivery-id': d.id, 'data-event-id': d.eventId })} columns=${[
      { label: 'When', render: (d) => when(d.createdAt) },
      { label: 'Event', key: 'type' },
      { label: 'Status', key: 'status' },
      { label: 'Attempts', key: 'attempts' },
      { label: 'Answer', render: (d) => d.responseStatusCode ?? d.errorMessage ?? '—' },
      { label: 'Resend', render: (d) => html`<button type="button" onClick=${() => resend(d)} disabled=${action.busy} aria-label=${`Resend delivery ${short(d.id)}`}>Resend</button>` },
    ]} />
  </section>`;
}
