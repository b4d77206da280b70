import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import { AuthorizedWhen } from '../../graphql-kit/root-field-grants';
import { adminSectionsIn } from './wallet-configurations';
import {
  AddressListArgs,
  AddressPage,
  AddressType,
  AssetBalanceType,
  BalanceArgs,
  CreateAddressInput,
  CreateMasterWalletInput,
  MasterWalletListArgs,
  MasterWalletPage,
  MasterWalletType,
  MasterWalletWithMessageType,
  RecoverableAssetsArgs,
  RecoverableAssetsType,
  UpdateAddressInput,
  UpdateMasterWalletInput,
} from './wallet.types';
import type { WalletsServices } from '.';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type WalletResolverServices = Pick<WalletsServices, 'addresses' | 'masterWallets'>;
type Context = GraphQLContext<WalletResolverServices>;

/** Settings that decide where money may go change only with the `admin` scope; the rest of a wallet with `write`. */
const adminForMoneySettings = (args: Record<string, unknown>) => {
  const input = args.input as { configurations?: unknown } | null | undefined;
  const sections = adminSectionsIn(input?.configurations);
  return sections.length ? { grant: 'admin', purpose: `to change ${sections.join(' or ')}` } : undefined;
};

@Resolver()
export class WalletResolver {
  @Authorized('write')
  @AuthorizedWhen(adminForMoneySettings)
  @Mutation(() => MasterWalletType, { description: 'Creates an HD master wallet; its secret never leaves Keel' })
  createMasterWallet(@Arg('input') input: CreateMasterWalletInput, @Ctx() ctx: Context): Promise<MasterWalletType> {
    return ctx.services.masterWallets.create(ctx.principal.organizationId, input);
  }

  @Authorized('read')
  @Query(() => MasterWalletPage)
  masterWallets(@Args() args: MasterWalletListArgs, @Ctx() ctx: Context): Promise<MasterWalletPage> {
    return ctx.services.masterWallets.list(ctx.principal.organizationId, args);
  }

  @Authorized('read')
  @Query(() => MasterWalletType)
  masterWallet(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<MasterWalletType> {
    return ctx.services.masterWallets.get(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @AuthorizedWhen(adminForMoneySettings)
  @Mutation(() => MasterWalletType, { description: 'Updates the wallet; deactivating it, or turning enableMultiChain off, is 409 CONFLICT (details.openCheckouts) while checkouts on the chains it would stop watching are open' })
  updateMasterWallet(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateMasterWalletInput, @Ctx() ctx: Context): Promise<MasterWalletType> {
    return ctx.services.masterWallets.update(ctx.principal.organizationId, id, input);
  }

  @Authorized('write')
  @Mutation(() => MasterWalletWithMessageType, { description: 'Stops watching the wallet and its addresses for deposits on a chain; 409 CONFLICT (details.openCheckouts) while checkouts there are open (payment intents or link sessions whose addresses are still watched)' })
  disableMasterWalletMonitoring(@Arg('id', () => ID) id: string, @Arg('blockchainId', () => ID) blockchainId: string, @Ctx() ctx: Context) {
    return ctx.services.masterWallets.setMonitoring(ctx.principal.organizationId, id, blockchainId, false);
  }

  @Authorized('write')
  @Mutation(() => MasterWalletWithMessageType, { description: 'Watches the wallet and its addresses for deposits on a chain again' })
  enableMasterWalletMonitoring(@Arg('id', () => ID) id: string, @Arg('blockchainId', () => ID) blockchainId: string, @Ctx() ctx: Context) {
    return ctx.services.masterWallets.setMonitoring(ctx.principal.organizationId, id, blockchainId, true);
  }

  @Authorized('read')
  @Query(() => [AssetBalanceType], { description: "The wallet address's on-chain balance of every registered asset" })
  masterWalletBalances(@Arg('id', () => ID) id: string, @Args() args: BalanceArgs, @Ctx() ctx: Context): Promise<AssetBalanceType[]> {
    return ctx.services.masterWallets.balances(ctx.principal.organizationId, id, args.blockchainId);
  }

  @Authorized('write')
  @Mutation(() => AddressType, { description: 'Derives the next deposit address of the master wallet' })
  createAddress(
    @Arg('masterWalletId', () => ID) masterWalletId: string,
    @Arg('input', () => CreateAddressInput, { nullable: true }) input: CreateAddressInput | undefined,
    @Ctx() ctx: Context,
  ): Promise<AddressType> {
    return ctx.services.addresses.create(ctx.principal.organizationId, masterWalletId, input ?? {});
  }

  @Authorized('read')
  @Query(() => AddressPage, { description: 'Deposit addresses of a master wallet, newest first' })
  addresses(@Arg('masterWalletId', () => ID) masterWalletId: string, @Args() args: AddressListArgs, @Ctx() ctx: Context): Promise<AddressPage> {
    return ctx.services.addresses.list(ctx.principal.organizationId, masterWalletId, args);
  }

  @Authorized('read')
  @Query(() => AddressType)
  address(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AddressType> {
    return ctx.services.addresses.get(ctx.principal.organizationId, id);
  }

  @Authorized('write')
  @Mutation(() => AddressType)
  updateAddress(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateAddressInput, @Ctx() ctx: Context): Promise<AddressType> {
    return ctx.services.addresses.update(ctx.principal.organizationId, id, input);
  }

  @Authorized('write')
  @Mutation(() => AddressType, { description: 'Stops watching the address; it is never handed out again' })
  deactivateAddress(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<AddressType> {
    return ctx.services.addresses.update(ctx.principal.organizationId, id, { isActive: false });
  }

  @Authorized('read')
  @Query(() => RecoverableAssetsType, { description: 'Native and token balances held at the address on a chain, read from the chain' })
  recoverableAssets(@Arg('id', () => ID) id: string, @Args() args: RecoverableAssetsArgs, @Ctx() ctx: Context): Promise<RecoverableAssetsType> {
    return ctx.services.addresses.recoverableAssets(ctx.principal.organizationId, id, args);
  }
}
