import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { readSanctionsFiles } from '../modules/aml/sanctions-files';
import { printFromServices } from './with-services';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `keel aml`: the sanctions lists Keel screens against. */
export function registerAmlCommands(program: Command): void {
  const aml = program.command('aml').description('AML sanctions screening');
  aml
    .command('load <path>')
    .description(
      'Load a newer sanctions list into PostgreSQL: a directory of sanctioned_addresses_<LIST>.txt files (replaces every list; date from its SOURCE.md "snapshot of YYYY-MM-DD") or one such file (replaces that list only). A file with a line that is no address of its list\'s chain is refused, and so is a list less than half the one in use unless --force. Every Keel process screens against it within SANCTIONS_REFRESH_INTERVAL_MS if its date is not older than the shipped snapshot',
    )
    .option('--date <YYYY-MM-DD>', 'the date of the list (default: from SOURCE.md, else today)')
    .option('--list <name>', 'the list a single file holds, when its name does not say (e.g. ETH, XBT)')
    .option('--force', 'load a list even when it is less than half the list in use')
    .option('--json', 'print only the JSON result: no progress on the terminal')
    .action((path: string, opts: { date?: string; list?: string; force?: boolean; json?: boolean }) =>
      printFromServices(async ({ services, progress }) => {
        if (opts.date && !DATE.test(opts.date)) throw new Error('--date must be YYYY-MM-DD');
        progress.update(`reading ${path}…`);
        const read = readSanctionsFiles(path, { list: opts.list, listDate: opts.date });
        // A truncated download must not clear a list: an empty list file is refused (a line that is no address already was), and so is one that shrank sharply unless --force (checked by the load, against the lists in use when it runs).
        const empty = read.lists.filter((l) => l.addresses.length === 0).map((l) => l.name);
        if (empty.length) throw new Error(`Refusing to load empty list(s): ${empty.join(', ')} (a truncated file?)`);
        const snapshot = { ...read, listDate: read.listDate ?? new Date().toISOString().slice(0, 10) };
        // The newest list is the one in use: one dated in the future would stay in use over every later one.
        const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
        if (snapshot.listDate > tomorrow) throw new Error(`Refusing a list dated ${snapshot.listDate}, after today: it would stay in use over every list loaded later (a mistyped --date or SOURCE.md?)`);
        progress.update(`loading ${snapshot.lists.reduce((n, l) => n + l.addresses.length, 0)} addresses of ${snapshot.lists.map((l) => l.name).join(', ')} into PostgreSQL…`);
        const loaded = await services.sanctionsLists.load(snapshot, { shipped: services.shippedSanctions, keepOthers: !statSync(path).isDirectory(), force: opts.force });
        return {
          loaded: loaded.version,
          lists: snapshot.lists.map((l) => ({ name: l.name, entries: l.addresses.length })),
          keptFromPrevious: loaded.keptFromPrevious,
          inUse: loaded.inUse,
        };
      }, opts),
    );
  aml
    .command('lists')
    .description('Show the sanctions lists in use: the newest loaded version, or the snapshot shipped with Keel')
    .action(() =>
      printFromServices(async ({ services }) => {
        const version = await services.sanctionsLists.preferred(services.shippedSanctions);
        const snapshot = version ? await services.sanctionsLists.snapshot(version) : services.shippedSanctions;
        return {
          source: snapshot.source,
          listDate: snapshot.listDate,
          loadedAt: version?.loadedAt ?? null,
          lists: snapshot.lists.map((l) => ({ name: l.name, entries: l.addresses.length })),
        };
      }),
    );
}
