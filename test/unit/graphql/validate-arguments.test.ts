import 'reflect-metadata';
import { validateOrReject, ValidationError } from 'class-validator';
import { ArgumentValidationError } from 'type-graphql';
import { validateArguments } from '../../../src/graphql-kit/validate-arguments';
import { PageArgs } from '../../../src/graphql-kit/types/page';
import { AssetLimitInput, PolicyInputType } from '../../../src/modules/agents/agent.types';
import { CreateApiKeyInput } from '../../../src/modules/api-keys/api-key.types';

/** What class-validator's own validateOrReject says, with type-graphql's options: the errors, or undefined. */
async function classValidatorVerdict(value: object): Promise<ValidationError[] | undefined> {
  return validateOrReject(value, { skipMissingProperties: true, forbidUnknownValues: false }).then(
    () => undefined,
    (errors: ValidationError[]) => errors,
  );
}

async function keelVerdict(value: object): Promise<ValidationError[] | undefined> {
  try {
    await validateArguments(value, undefined as never, undefined as never);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ArgumentValidationError);
    return (error as ArgumentValidationError).extensions.validationErrors;
  }
}

const build = <T extends object>(type: new () => T, fields: Partial<T>): T => Object.assign(new type(), fields);
const limit = (assetId: string, maxPerPayment?: string) => build(AssetLimitInput, { assetId, maxPerPayment });

const cases: [string, () => object][] = [
  ['a valid page', () => build(PageArgs, { limit: 10, offset: 0 })],
  ['a page over its limit, with a negative offset', () => build(PageArgs, { limit: 101, offset: -1 })],
  ['a page with a malformed date and from after to', () => build(PageArgs, { limit: 5, offset: 0, from: '2026-02-30', to: '2025-01-01' })],
  ['a page whose from is later than its to', () => build(PageArgs, { limit: 5, offset: 0, from: '2026-02-01', to: '2026-01-01' })],
  ['a valid key', () => build(CreateApiKeyInput, { name: 'k', scopes: ['read'] })],
  ['a key with an empty name and no scopes', () => build(CreateApiKeyInput, { name: '', scopes: [] })],
  ['a policy with nested limits, one malformed', () => build(PolicyInputType, { windowSeconds: 5, assetLimits: [limit('a', '1.5'), limit('', 'x')] })],
];

describe('argument validation gives what class-validator gives', () => {
  test.each(cases)('%s', async (name, make) => {
    // Twice: the second call reads the rules gathered by the first.
    for (let i = 0; i < 2; i++) {
      const expected = await classValidatorVerdict(make());
      expect(expected === undefined).toBe(name.startsWith('a valid'));
      expect(await keelVerdict(make())).toEqual(expected);
    }
  });

  test('a list of inputs: each item validated, the first failing item reported', async () => {
    const items = () => [build(CreateApiKeyInput, { name: 'ok', scopes: ['read'] }), build(CreateApiKeyInput, { name: '', scopes: ['read'] }), build(CreateApiKeyInput, { name: 'x', scopes: [] })];
    expect(await keelVerdict(items())).toEqual(await classValidatorVerdict(items()[1]));
  });

  test('anything but an object is not validated', async () => {
    expect(await keelVerdict(null as never)).toBeUndefined();
    expect(await keelVerdict('text' as never)).toBeUndefined();
  });
});
