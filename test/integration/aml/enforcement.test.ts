import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ethers } from 'ethers';
import { useTestKeel } from '../../support/use-test-keel';
import { anotherAdmin } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { keelCommand } from '../../support/keel-cli';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { shippedSanctionsDirectory } from '../../../src/modules/aml/sanctions-files';
import { Model } from 'objection';
import { createDb } from '../../../src/platform/db/knex';
import { UnitOfWork } from '../../../src/platform/db/unit-of-work';
import { Failpoints } from '../../../src/platform/failpoints';
import { ChainService } from '../../../src/modules/chains/chain.service';
import { FlaggedTransferService } from '../../../src/modules/aml/flagged-transfer.service';

/** The date a list loaded here carries: the newest there is (one dated later is refused). */
const TODAY = new Date().toISOString().slice(0, 10);

/**
 * Sanctions enforced where money moves: withdrawals and sweeps to a listed address are refused;
 * deposits from one are flagged, reported and held from auto-sweep. The test names a funded dev
 * account as sanctioned by loading a list with `keel aml load`, so it can send from it.
 */
const OFAC_ETH = readFileSync(path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_ETH.txt'), 'utf8').split('\n')[0].trim();
const SANCTIONED_SENDER = devChainAccount(8);

let chainId: string;
let ethAssetId: string;
let rpcUrl: string;
/** What the flagging test leaves for the review test. */
let review: { walletId: string; taintedId: string; taintedAddress: string; flaggedId: string };

const { t, orgs: [org, other] } = useTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, SANCTIONS_REFRESH_INTERVAL_MS: 100, SWEEP_RETRY_BASE_MS: 200, SWEEP_RETRY_POLL_INTERVAL_MS: 100, SETTLEMENT_RULES_POLL_INTERVAL_MS: 100, SETTLEMENT_RULES_RETRY_BASE_MS: 200 }, { orgs: 2 });
beforeAll(async () => {
  chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
  ethAssetId = (await org.core.get(`/v1/assets?blockchainId=${chainId}&symbol=ETH`)).body.data[0].id;
  rpcUrl = t.keel.services.networks.get(chainId)!.spec.rpcUrl;
});

const createWallet = async (client: typeof org.core, configurations?: object) => {
  const res = await client.post('/v1/master-wallets', { blockchainId: chainId, name: 'Treasury', configurations });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; walletAddress: string; configurations: any };
};
const createAddress = async (walletId: string) => (await org.core.post(`/v1/master-wallets/${walletId}/addresses`, { name: 'customer' })).body.data as { id: string; address: string };

describe('keel aml load', () => {
  test('loads a newer list into PostgreSQL with its date; running Keel screens against it, the other lists kept', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-aml-'));
    const file = path.join(dir, 'sanctioned_addresses_TEST.txt');
    // Written in lower case: the list's case does not matter for EVM addresses.
    writeFileSync(file, `# test list\n${SANCTIONED_SENDER.address.toLowerCase()}\n`);
    const out = await keelCommand<any>(t.config, ['aml', 'load', file, '--date', TODAY]);
    expect(out).toMatchObject({ loaded: { listDate: TODAY, source: file }, lists: [{ name: 'TEST', entries: 1 }], inUse: true });
    expect(out.keptFromPrevious).toEqual(expect.arrayContaining(['ETH', 'XBT', 'USDT']));

    // A list dated in the future (a mistyped --date) is refused: it would stay in use over every later one.
    await expect(keelCommand(t.config, ['aml', 'load', file, '--date', '2062-11-29'])).rejects.toThrow(/Refusing a list dated 2062-11-29, after today/);

    // An empty file (a truncated download) is refused rather than clearing its list.
    const empty = path.join(dir, 'sanctioned_addresses_ETH.txt');
    writeFileSync(empty, '\n');
    await expect(keelCommand(t.config, ['aml', 'load', empty])).rejects.toThrow(/empty list/);
    // So is a saved error page, an HTML page or a file cut short: the first line that is no address of the list's chain is named.
    writeFileSync(empty, '404: Not Found');
    await expect(keelCommand(t.config, ['aml', 'load', empty])).rejects.toThrow('sanctioned_addresses_ETH.txt: line 1 is not an address of the ETH list (EVM): "404: Not Found"');
    const xbt = path.join(dir, 'sanctioned_addresses_XBT.txt');
    writeFileSync(xbt, '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head></html>\n');
    await expect(keelCommand(t.config, ['aml', 'load', xbt])).rejects.toThrow('sanctioned_addresses_XBT.txt: line 1 is not an address of the XBT list (Base58, Bech32): "<!DOCTYPE html>"');
    writeFileSync(empty, `# ETH\n${OFAC_ETH}\n${OFAC_ETH.slice(0, 20)}`);
    await expect(keelCommand(t.config, ['aml', 'load', empty])).rejects.toThrow(`sanctioned_addresses_ETH.txt: line 3 is not an address of the ETH list (EVM): "${OFAC_ETH.slice(0, 20)}"`);
    // A list less than half the one in use (a download cut at a line's end) needs --force; recorded then (here older, so not used).
    const shippedEth = readFileSync(path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_ETH.txt'), 'utf8').trim().split('\n');
    writeFileSync(empty, shippedEth.slice(0, 2).join('\n'));
    await expect(keelCommand(t.config, ['aml', 'load', empty])).rejects.toThrow(`Refusing to load list(s) less than half the list in use: ETH (2 entries, ${shippedEth.length} in use) (a truncated download?); --force loads them anyway`);
    expect(await keelCommand<any>(t.config, ['aml', 'load', empty, '--force', '--date', '2000-01-01'])).toMatchObject({ lists: [{ name: 'ETH', entries: 2 }], inUse: false });

    const lists = await eventually(async () => {
      const res = await org.core.get('/v1/aml/lists');
      return res.body.data.listDate === TODAY && res.body.data;
    }, 10_000);
    expect(lists.source).toBe(file);
    expect(lists.lists).toContainEqual({ name: 'TEST', entries: 1 });
    const check = await org.core.post('/v1/aml/check-batch', { addresses: [SANCTIONED_SENDER.address, OFAC_ETH] });
    expect(check.body.data.map((r: any) => r.isSanctioned)).toEqual([true, true]);
    expect(check.body.data[0].identifications).toMatchObject([{ list: 'TEST', listedAddress: SANCTIONED_SENDER.address.toLowerCase() }]);
  });
});

describe('withdrawals', () => {
  test('a transfer to a sanctioned recipient (any case) is refused with 403 SANCTIONED_ADDRESS naming the line; nothing is queued', async () => {
    const wallet = await createWallet(org.core);
    for (const recipient of [OFAC_ETH, OFAC_ETH.toLowerCase()]) {
      const res = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, {
        assets: [
          { assetId: ethAssetId, recipient: ethers.Wallet.createRandom().address, amount: '0.1' },
          { assetId: ethAssetId, recipient, amount: '0.1' },
        ],
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({
        code: 'SANCTIONED_ADDRESS',
        details: { fields: [{ field: 'assets.1.recipient', error: 'SANCTIONED_ADDRESS' }], matches: expect.arrayContaining([{ list: 'ETH', address: OFAC_ETH }]) },
      });
    }
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.total).toBe(0);
  });

  test('approving a held transfer screens its recipient again: listed since the request, it is refused and stays held', async () => {
    const wallet = await createWallet(org.core, { security: { requireApprovalForTransfers: true } });
    await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: wallet.walletAddress, amount: '1' });
    await eventually(async () => (await org.core.get(`/v1/master-wallets/${wallet.id}/transactions?direction=incoming`)).body.totalCount === 1, 30_000);
    const recipient = ethers.Wallet.createRandom().address;
    const held = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: ethAssetId, recipient, amount: '0.1' }] });
    expect(held.status).toBe(201);
    expect(held.body.data.status).toBe('PENDING_APPROVAL');

    const { sanctionsLists, shippedSanctions } = t.keel.services;
    await sanctionsLists.load({ source: 'test: recipient listed after the request', listDate: TODAY, lists: [{ name: 'LATE', addresses: [recipient] }] }, { shipped: shippedSanctions, keepOthers: true });
    await eventually(async () => (await org.core.get('/v1/aml/lists')).body.data.source === 'test: recipient listed after the request', 10_000);

    const approve = await (await anotherAdmin(org)).core.post(`/v1/transfers/${held.body.data.id}/approve`);
    expect(approve.status).toBe(403);
    expect(approve.body.error).toMatchObject({ code: 'SANCTIONED_ADDRESS', details: { matches: [{ list: 'LATE', address: recipient }] } });
    expect((await org.core.get(`/v1/transfers/${held.body.data.id}`)).body.data.status).toBe('PENDING_APPROVAL');
    expect((await org.core.post(`/v1/transfers/${held.body.data.id}/reject`)).body.data.status).toBe('REJECTED');
  });

  test('a sweep destination or allowed recipient on a list is refused when configured', async () => {
    const refused = await org.core.post('/v1/master-wallets', {
      blockchainId: chainId,
      name: 'Sweeping',
      configurations: { autoSweep: { enabled: true, threshold: '1', destinationAddress: OFAC_ETH }, security: { allowedRecipients: [OFAC_ETH] } },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'SANCTIONED_ADDRESS', details: { fields: [{ field: 'configurations.autoSweep.destinationAddress' }] } });
    const wallet = await createWallet(org.core);
    const patched = await org.core.patch(`/v1/master-wallets/${wallet.id}`, { configurations: { security: { allowedRecipients: [ethers.getAddress(SANCTIONED_SENDER.address)] } } });
    expect(patched.status).toBe(403);
    expect(patched.body.error.details.fields[0].field).toBe('configurations.security.allowedRecipients.0');
  });
});

describe('deposits from a sanctioned address', () => {
  test('are flagged on the transfer record, raise address.incoming_transfer_flagged and hold the address from auto-sweep; a clean deposit is swept', async () => {
    const wallet = await createWallet(org.core, { autoSweep: { enabled: true, threshold: '0.5' } });
    expect(wallet.configurations.aml).toMatchObject({ status: 'CLEAR' });
    const tainted = await createAddress(wallet.id);
    const clean = await createAddress(wallet.id);

    const { txHash } = await fundFromFaucet(rpcUrl, SANCTIONED_SENDER.privateKey, { to: tainted.address, amount: '1' });
    const record = await eventually(async () => {
      const res = await org.core.get(`/v1/addresses/${tainted.id}/transactions?direction=incoming`);
      return res.body.transfer.find((r: any) => r.hash === txHash);
    }, 30_000);
    expect(record.aml).toEqual({ flaggedAt: expect.any(String), releasedAt: null, matches: [{ list: 'TEST', address: SANCTIONED_SENDER.address.toLowerCase() }] });

    const listDate = (await org.core.get('/v1/aml/lists')).body.data.listDate;
    const [event] = (await t.keel.platform.db('outbox_events').where({ type: 'address.incoming_transfer_flagged' })).map((r) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope));
    expect(event).toMatchObject({
      type: 'address.incoming_transfer_flagged',
      data: { hash: txHash, from: SANCTIONED_SENDER.address, to: tainted.address, rawValue: '1000000000000000000', matches: [{ list: 'TEST' }], listDate, heldFromAutoSweep: true, wallet: { id: tainted.id, masterWalletId: wallet.id } },
    });

    // The same wallet's other address, funded from a clean account, is swept: auto-sweep works here.
    await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: clean.address, amount: '1' });
    await eventually(async () => (await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data.find((x: any) => x.kind === 'sweep' && x.addressId === clean.id), 30_000);
    const sweeps = (await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data.filter((x: any) => x.addressId === tainted.id);
    expect(sweeps).toEqual([]);

    // A later clean deposit to the tainted address does not release it either.
    const later = await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: tainted.address, amount: '1' });
    await eventually(async () => (await org.core.get(`/v1/addresses/${tainted.id}/transactions?direction=incoming`)).body.transfer.find((r: any) => r.hash === later.txHash && r.aml === null), 30_000);
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data.filter((x: any) => x.addressId === tainted.id)).toEqual([]);
    // Its sweep is due, held: looked at again until the hold is released, never counted as a failure.
    expect(await t.keel.platform.db('sweeps_due').where({ addressId: tainted.id }).select('purpose', 'attempts', 'lastError')).toEqual([{ purpose: 'auto_sweep', attempts: 0, lastError: expect.stringMatching(/^held/) }]);

    const shown = (await org.core.get(`/v1/master-wallets/${wallet.id}`)).body.data.configurations.aml;
    expect(shown).toMatchObject({ status: 'FLAGGED', message: expect.stringContaining('1 incoming transfer'), provider: expect.stringContaining(listDate) });
    review = { walletId: wallet.id, taintedId: tainted.id, taintedAddress: tainted.address, flaggedId: record.id };
  });

  test('an admin releases the hold after review (recorded, announced); the held sweep then goes, with no new deposit; write keys and other organisations cannot', async () => {
    const held = await org.core.get('/v1/aml/flagged-transfers?released=false');
    expect(held.status).toBe(200);
    expect(held.body.data).toEqual([expect.objectContaining({ id: review.flaggedId, from: SANCTIONED_SENDER.address, amount: '1', symbol: 'ETH', releasedAt: null, matches: [{ list: 'TEST', address: SANCTIONED_SENDER.address.toLowerCase() }] })]);

    const writer = await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'writer', host: 'core', scopes: ['read', 'write'], tier: 'Business' });
    const byWriter = await org.core.with({ apiKey: writer.secret, orgId: org.orgId }).post(`/v1/aml/flagged-transfers/${review.flaggedId}/release`, { note: 'ok' });
    expect(byWriter.status).toBe(403);
    expect((await other.core.post(`/v1/aml/flagged-transfers/${review.flaggedId}/release`, { note: 'ok' })).status).toBe(404);
    expect((await other.core.get(`/v1/aml/flagged-transfers/${review.flaggedId}`)).status).toBe(404);
    expect((await other.core.get('/v1/aml/flagged-transfers')).body.data).toEqual([]);

    const released = await org.core.post(`/v1/aml/flagged-transfers/${review.flaggedId}/release`, { note: 'refund arranged with compliance, case 42' });
    expect(released.status).toBe(200);
    expect(released.body.data).toMatchObject({ id: review.flaggedId, releasedAt: expect.any(String), releasedBy: expect.any(String), releaseNote: 'refund arranged with compliance, case 42' });
    expect((await org.core.post(`/v1/aml/flagged-transfers/${review.flaggedId}/release`, { note: 'again' })).status).toBe(409);
    const [event] = (await t.keel.platform.db('outbox_events').where({ type: 'address.incoming_transfer_flag_released' })).map((r) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope));
    expect(event.data).toMatchObject({ id: review.flaggedId, from: SANCTIONED_SENDER.address, amount: '1', note: 'refund arranged with compliance, case 42', addressId: review.taintedId });
    expect((await org.core.get(`/v1/master-wallets/${review.walletId}`)).body.data.configurations.aml.status).toBe('CLEAR');

    // The sweep the hold stopped is due again: the address's whole balance (both deposits, less gas) goes.
    const sweep = await eventually(async () => (await org.core.get(`/v1/transfers?masterWalletId=${review.walletId}`)).body.data.find((x: any) => x.kind === 'sweep' && x.addressId === review.taintedId && x.status === 'CONFIRMED'), 30_000);
    expect(Number(sweep.items[0].amount)).toBeGreaterThan(1.99);
    expect(await t.keel.platform.db('sweeps_due').where({ addressId: review.taintedId })).toEqual([]);
  });

  test('a release runs on its own transaction\'s connection: it completes on a pool of one', async () => {
    const wallet = await createWallet(org.core);
    const tainted = await createAddress(wallet.id);
    const { txHash } = await fundFromFaucet(rpcUrl, SANCTIONED_SENDER.privateKey, { to: tainted.address, amount: '1' });
    const flagged = await eventually(async () => (await org.core.get('/v1/aml/flagged-transfers?released=false')).body.data.find((r: any) => r.hash === txHash), 30_000);
    const { platform } = t.keel;
    // A second connection asked for inside the release's transaction would wait for the pool's only one.
    const one = createDb(t.config.DATABASE_URL, 1, { acquireTimeoutMs: 3_000 });
    Model.knex(platform.db);
    try {
      const service = new FlaggedTransferService(one, new ChainService(one), platform.outbox, new UnitOfWork(one, platform.idempotency, Failpoints.fromConfig(t.config, platform.logger)));
      const released = await service.release(org.orgId, (await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'reviewer', host: 'core', scopes: ['read', 'write', 'admin'], tier: 'Business' })).key.id, flagged.id, 'reviewed');
      expect(released).toMatchObject({ id: flagged.id, symbol: 'ETH', amount: '1', releaseNote: 'reviewed', releasedAt: expect.any(Date) });
    } finally {
      await one.destroy();
    }
  });

  /** A deposit's record, once Keel has confirmed it; `wallet`: the master wallet's or the address's path. */
  const recorded = (wallet: string, txHash: string) => eventually(async () => (await org.core.get(`${wallet}/transactions?direction=incoming`)).body.transfer.find((r: any) => r.hash === txHash), 30_000);
  const executions = async (ruleId: string) => (await org.core.get(`/v1/settlement-rules/${ruleId}/executions`)).body.data as any[];
  const sweepEthRule = async (wallet: { masterWalletId: string } | { addressId: string }) => {
    const res = await org.core.post('/v1/settlement-rules', { ...wallet, name: 'Sweep ETH', delay: 600, source: { blockchainId: chainId, assetIds: [ethAssetId] }, destination: { blockchainId: chainId, assetId: ethAssetId, address: ethers.Wallet.createRandom().address } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string };
  };
  /** The rule's delay passes: its execution is looked at; held, it is still PENDING, no attempt counted, and nothing is sent, however often it is looked at. */
  const expectHeld = async (ruleId: string) => {
    await t.keel.platform.db('settlement_rule_executions').where({ ruleId, status: 'PENDING' }).update({ runAfter: new Date() });
    const [looked] = await eventually(async () => {
      const list = await executions(ruleId);
      return (list[0]?.error || list[0]?.status !== 'PENDING') && list;
    }, 10_000);
    expect(looked).toMatchObject({ status: 'PENDING', attempts: 0, transferId: null, error: expect.stringMatching(/^held/) });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await executions(ruleId)).toEqual([expect.objectContaining({ status: 'PENDING', attempts: 0, transferId: null })]);
  };
  const executedAfterRelease = async (ruleId: string, flaggedId: string) => {
    expect((await org.core.post(`/v1/aml/flagged-transfers/${flaggedId}/release`, { note: 'reviewed' })).status).toBe(200);
    const [done] = await eventually(async () => {
      const list = await executions(ruleId);
      return list[0]?.status === 'EXECUTED' && list;
    }, 30_000);
    expect(done).toMatchObject({ kind: 'sweep', amount: '1', attempts: 1, error: null });
  };

  test("a settlement rule's execution waits while its address holds a flagged deposit that arrived during the rule's delay, never failed for it, and goes once an admin releases the deposit", async () => {
    const wallet = await createWallet(org.core);
    const address = await createAddress(wallet.id);
    const rule = await sweepEthRule({ addressId: address.id });
    const clean = await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: address.address, amount: '1' });
    await recorded(`/v1/addresses/${address.id}`, clean.txHash);
    expect((await executions(rule.id)).map((e) => e.status)).toEqual(['PENDING']);
    const tainted = await fundFromFaucet(rpcUrl, SANCTIONED_SENDER.privateKey, { to: address.address, amount: '1' });
    const flagged = await recorded(`/v1/addresses/${address.id}`, tainted.txHash);
    expect(flagged.aml).toMatchObject({ flaggedAt: expect.any(String), releasedAt: null });

    await expectHeld(rule.id);
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data).toEqual([]);
    await executedAfterRelease(rule.id, flagged.id);
  });

  test("a master wallet's own flagged deposit holds its settlement rules: a later clean deposit triggers nothing, and an execution pending from before waits for the release", async () => {
    const wallet = await createWallet(org.core);
    const rule = await sweepEthRule({ masterWalletId: wallet.id });
    const path = `/v1/master-wallets/${wallet.id}`;
    const before = await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: wallet.walletAddress, amount: '1' });
    await recorded(path, before.txHash);
    const tainted = await fundFromFaucet(rpcUrl, SANCTIONED_SENDER.privateKey, { to: wallet.walletAddress, amount: '1' });
    const flagged = await recorded(path, tainted.txHash);
    expect(flagged.aml).toMatchObject({ flaggedAt: expect.any(String), releasedAt: null });
    const later = await fundFromFaucet(rpcUrl, devChainAccount(0).privateKey, { to: wallet.walletAddress, amount: '1' });
    await recorded(path, later.txHash);
    // The rule's executions are recorded in the transaction that records the deposit: the later one has none.
    expect((await executions(rule.id)).map((e) => e.depositTxHash)).toEqual([before.txHash]);

    await expectHeld(rule.id);
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data).toEqual([]);
    await executedAfterRelease(rule.id, flagged.id);
  });

  test("another organisation neither sees the flag nor is flagged itself", async () => {
    const wallet = await createWallet(other.core);
    expect((await other.core.get(`/v1/master-wallets/${wallet.id}`)).body.data.configurations.aml.status).toBe('CLEAR');
    const mine = (await org.core.get('/v1/master-wallets')).body.data[0];
    expect((await other.core.get(`/v1/master-wallets/${mine.id}`)).status).toBe(404);
    const otherEvents = await t.keel.platform.db('outbox_events').where({ type: 'address.incoming_transfer_flagged', organizationId: other.orgId });
    expect(otherEvents).toEqual([]);
  });
});

describe('keel aml load, a whole directory', () => {
  test('replaces every list with a snapshot as recent as the one in use (date from its SOURCE.md; of two of one date the later load is used); an older one is recorded but not used', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-aml-dir-'));
    cpSync(shippedSanctionsDirectory(), dir, { recursive: true });
    writeFileSync(path.join(dir, 'SOURCE.md'), `OFAC SDN digital currency addresses, snapshot of ${TODAY}\n`);
    // The lists loaded earlier (TEST, LATE) are not in the directory: dropping them, as a download
    // that never arrived would, takes --force.
    await expect(keelCommand(t.config, ['aml', 'load', dir])).rejects.toThrow(/Refusing to load list\(s\) less than half the list in use: .*TEST \(0 entries, 1 in use\).*--force loads them anyway/);
    const newer = await keelCommand<any>(t.config, ['aml', 'load', dir, '--force']);
    expect(newer).toMatchObject({ loaded: { listDate: TODAY }, keptFromPrevious: [], inUse: true });
    await eventually(async () => (await org.core.get('/v1/aml/lists')).body.data.source === dir, 10_000);
    const check = await org.core.post('/v1/aml/check-batch', { addresses: [SANCTIONED_SENDER.address, OFAC_ETH] });
    // The TEST list was not in the directory: the dev account is no longer listed; OFAC's entries still are.
    expect(check.body.data.map((r: any) => r.isSanctioned)).toEqual([false, true]);

    writeFileSync(path.join(dir, 'SOURCE.md'), 'snapshot of 2000-01-01\n');
    const older = await keelCommand<any>(t.config, ['aml', 'load', dir]);
    expect(older).toMatchObject({ loaded: { listDate: '2000-01-01' }, inUse: false });
    expect(await keelCommand<any>(t.config, ['aml', 'lists'])).toMatchObject({ listDate: TODAY, source: dir });
  });
});
