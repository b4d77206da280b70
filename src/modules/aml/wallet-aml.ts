import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { SanctionsScreen } from './sanctions-screen';
import { unreleasedFlags } from '../deposits';
import type { SendingConfigurations, WalletAmlView, WalletScreening } from '../wallets';

/**
 * AML for wallets: configurations.aml (CLEAR, or FLAGGED with the number of incoming transfers from
 * sanctioned addresses the wallet and its addresses hold), and a refusal to configure a sweep
 * destination or an allowed recipient that is on a sanctions list.
 */
export class WalletAml implements WalletScreening {
  constructor(private readonly screen: SanctionsScreen) {}

  /** 403 SANCTIONED_ADDRESS naming the configuration field that holds a sanctioned address. */
  assertConfigurations(configurations: SendingConfigurations): void {
    const candidates: [string, string][] = [
      ['configurations.autoSweep.destinationAddress', configurations.autoSweep.destinationAddress],
      ...configurations.security.allowedRecipients.map((a, i): [string, string] => [`configurations.security.allowedRecipients.${i}`, a]),
    ];
    for (const [field, address] of candidates) {
      if (!address) continue;
      const result = this.screen.screen(address);
      if (result.sanctioned) {
        throw new KeelError('SANCTIONED_ADDRESS', `${field}: ${address} is on a sanctions list (${result.matches.map((m) => m.list).join(', ')})`, { fields: [{ field, error: 'SANCTIONED_ADDRESS' }], matches: result.matches });
      }
    }
  }

  /** configurations.aml of each master wallet (its own address and its deposit addresses together). */
  async statuses(db: Knex | Knex.Transaction, masterWalletIds: string[]): Promise<Map<string, WalletAmlView>> {
    return this.statusesBy(db, 'masterWalletId', masterWalletIds);
  }

  /** configurations.aml of each deposit address (an agent wallet's addressWallet, for one), by address id. */
  async addressStatuses(db: Knex | Knex.Transaction, addressIds: string[]): Promise<Map<string, WalletAmlView>> {
    return this.statusesBy(db, 'addressId', addressIds);
  }

  private async statusesBy(db: Knex | Knex.Transaction, column: 'masterWalletId' | 'addressId', ids: string[]): Promise<Map<string, WalletAmlView>> {
    const rows: { id: string; count: string }[] = ids.length
      ? await unreleasedFlags(db)
          .whereIn(column, ids)
          .groupBy(column)
          .select(`${column} as id`)
          .count('* as count')
      : [];
    const flagged = new Map(rows.map((r) => [r.id, Number(r.count)]));
    const info = this.screen.info();
    const provider = `keel-sanctions-screen (OFAC SDN digital currency addresses${info.listDate ? `, list of ${info.listDate}` : ''})`;
    return new Map(
      ids.map((id) => {
        const n = flagged.get(id) ?? 0;
        const view: WalletAmlView = n
          ? { status: 'FLAGGED', provider, message: `${n} incoming transfer${n === 1 ? '' : 's'} from sanctioned addresses awaiting review; the receiving addresses are held from auto-sweep` }
          : { status: 'CLEAR', provider, message: 'No unreviewed incoming transfer from a sanctioned address' };
        return [id, view];
      }),
    );
  }
}
