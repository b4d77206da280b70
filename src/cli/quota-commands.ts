import type { Command } from 'commander';
import { printFromServices } from './with-services';

/** `keel quota`: an organisation's monthly request quota. */
export function registerQuotaCommands(program: Command): void {
  const quota = program.command('quota').description("Organisations' monthly request quotas");
  quota
    .command('set <orgId> <requests>')
    .description("Set the organisation's monthly request quota (requests, or `tier` for its tier's again); in force on every node at once; prints its usage")
    .option('--json', 'print JSON (the default output)')
    .action((orgId: string, requests: string) =>
      printFromServices(({ services }) => services.quotas.setLimit(orgId, requests === 'tier' ? null : wholeNumber(requests))),
    );
  quota
    .command('show <orgId>')
    .description("Print the organisation's usage this month against its quota, by day and by key")
    .option('--json', 'print JSON (the default output)')
    .action((orgId: string) => printFromServices(({ services }) => services.quotas.usage(orgId)));
}

/** `100000`, `100_000` or `100,000`; anything else is passed on as NaN for the service to refuse. */
function wholeNumber(text: string): number {
  return /^\d{1,3}([_,]?\d{3})*$/.test(text) ? Number(text.replace(/[_,]/g, '')) : Number.NaN;
}
