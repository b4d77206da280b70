import type { Knex } from 'knex';

/** A wallet's configurations.aml as the API shows it: Keel's own screening, not a stored setting. */
export interface WalletAmlView {
  message: string;
  provider: string;
  status: 'CLEAR' | 'FLAGGED';
}

/** Where a wallet's configurations may send money: the addresses screened when they are set. */
export interface SendingConfigurations {
  autoSweep: { destinationAddress: string };
  security: { allowedRecipients: string[] };
}

/**
 * What wallets ask of AML screening (the aml module's WalletAml, wired in services.ts): refuse a
 * configuration that sends to a sanctioned address, and say each wallet's or address's configurations.aml.
 */
export interface WalletScreening {
  /** 403 SANCTIONED_ADDRESS naming the configuration field that holds a sanctioned address. */
  assertConfigurations(configurations: SendingConfigurations): void;
  /** configurations.aml of each master wallet, by id. */
  statuses(db: Knex | Knex.Transaction, masterWalletIds: string[]): Promise<Map<string, WalletAmlView>>;
  /** configurations.aml of each deposit address, by address id. */
  addressStatuses(db: Knex | Knex.Transaction, addressIds: string[]): Promise<Map<string, WalletAmlView>>;
}
