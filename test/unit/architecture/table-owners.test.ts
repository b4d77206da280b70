import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Tables are read by their own module (ARCHITECTURE.md, Module faces): another module asks the
 * owner's face (a `*-rows.ts` function in the caller's transaction, or a `*-queries.ts` subquery
 * for a one-statement join). This reads every module's source for the names of other modules'
 * tables and expects none. A table's owner is the module whose model declares its `tableName`, or
 * OWNED below.
 */
const MODULES = join(__dirname, '..', '..', '..', 'src', 'modules');

/** Tables without an objection model, and their modules. */
const OWNED: Record<string, string> = {
  agent_wallets: 'agents',
  chain_cursors: 'deposits',
  ledger_balances: 'ledger',
  ledger_entries: 'ledger',
  master_wallet_chains: 'wallets',
  orderbook_shards: 'orders',
  settlement_leases: 'settlement',
  settlement_differences: 'settlement',
  trading_exits: 'settlement',
  settlement_rule_executions: 'settlement-rules',
  settlement_rules: 'settlement-rules',
  transfer_items: 'withdrawals',
  wallet_debts: 'ledger',
  gas_charges: 'ledger',
};

const sources = (module: string) =>
  readdirSync(join(MODULES, module))
    .filter((f) => f.endsWith('.ts'))
    .map((file) => ({ file, text: readFileSync(join(MODULES, module, file), 'utf8') }));

function tableOwners(): Map<string, string> {
  const owners = new Map(Object.entries(OWNED));
  for (const module of readdirSync(MODULES)) {
    for (const { text } of sources(module)) for (const [, table] of text.matchAll(/tableName = '([a-z_]+)'/g)) owners.set(table, module);
  }
  return owners;
}

/** Where a module's source names a table: knex's db('t') / join('t'), objection's relation, or SQL text. */
const names = (table: string) => new RegExp(`(\\(\\s*'${table}(?: as \\w+)?'\\s*[,)]|\\b(?:FROM|JOIN|from|join|UPDATE|INTO)\\s+${table}\\b)`);

function reads(): string[] {
  const owners = tableOwners();
  const found = new Map<string, Set<string>>();
  for (const module of readdirSync(MODULES)) {
    for (const { file, text } of sources(module)) {
      for (const [table, owner] of owners) {
        if (owner === module || !names(table).test(text)) continue;
        const key = `${module} reads ${owner}'s ${table}`;
        found.set(key, (found.get(key) ?? new Set()).add(file));
      }
    }
  }
  return [...found].map(([key, files]) => `${key}: ${[...files].sort().join(', ')}`).sort();
}

describe("tables are read by their own module, through the owner's face", () => {
  it('finds the owners of the tables', () => {
    const owners = tableOwners();
    expect(owners.size).toBeGreaterThan(25);
    expect(owners.get('markets')).toBe('markets');
    expect(owners.get('chain_transfers')).toBe('deposits');
  });

  it("finds no read of another module's table", () => {
    expect(reads()).toEqual([]);
  });
});
