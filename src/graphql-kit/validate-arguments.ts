import { getMetadataStorage, MetadataStorage, ValidationError, Validator, ValidatorOptions } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { ArgumentValidationError, ValidatorFn } from 'type-graphql';

// type-graphql's defaults for its built-in check, which Keel keeps.
const OPTIONS: ValidatorOptions = { skipMissingProperties: true, forbidUnknownValues: false };

/** class-validator's executor, the one its `validate` runs; its package types do not export it. */
interface ValidationExecutor {
  metadataStorage: MetadataStorage;
  awaitingPromises: Promise<unknown>[];
  execute(object: object, targetSchema: string | undefined, errors: ValidationError[]): void;
  stripEmptyErrors(errors: ValidationError[]): ValidationError[];
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ValidationExecutor } = require('class-validator/cjs/validation/ValidationExecutor') as {
  ValidationExecutor: new (validator: Validator, options: ValidatorOptions) => ValidationExecutor;
};

/**
 * class-validator's own rules registry, but a class's rules (its own and inherited ones) are
 * gathered once: class-validator searches every registered class for ancestors on each call.
 * Rules are registered by decorators when a class is defined, before any instance of it is
 * validated, so a class's gathered list never changes afterwards.
 */
function rulesGatheredOnce(storage: MetadataStorage): MetadataStorage {
  const gathered = new Map<Function, ValidationMetadata[]>();
  const byProperty = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  return Object.assign(Object.create(storage) as MetadataStorage, {
    getTargetValidationMetadatas(target: Function, schema: string | undefined, always: boolean, strictGroups: boolean, groups?: string[]): ValidationMetadata[] {
      // Keel validates without a schema, groups, `always` or `strictGroups`; any other call is passed on.
      if (schema !== undefined || always || strictGroups || groups?.length) return storage.getTargetValidationMetadatas(target, schema as string, always, strictGroups, groups);
      let metadatas = gathered.get(target);
      if (!metadatas) {
        metadatas = storage.getTargetValidationMetadatas(target, schema as unknown as string, always, strictGroups, groups);
        gathered.set(target, metadatas);
        byProperty.set(metadatas, storage.groupByPropertyName(metadatas));
      }
      return metadatas;
    },
    groupByPropertyName(metadatas: ValidationMetadata[]): Record<string, ValidationMetadata[]> {
      return byProperty.get(metadatas) ?? storage.groupByPropertyName(metadatas);
    },
  });
}

const validator = new Validator();
const rules = rulesGatheredOnce(getMetadataStorage());

const isObject = (value: unknown): value is object => value !== null && typeof value === 'object';

/** class-validator's `validateOrReject` for one object, with the rules gathered once; no promise unless a rule is asynchronous. */
function validateObject(object: object): void | Promise<void> {
  const executor = new ValidationExecutor(validator, OPTIONS);
  executor.metadataStorage = rules;
  const errors: ValidationError[] = [];
  executor.execute(object, undefined, errors);
  const verdict = () => {
    const found = executor.stripEmptyErrors(errors);
    if (found.length) throw new ArgumentValidationError(found);
  };
  if (executor.awaitingPromises.length) return Promise.all(executor.awaitingPromises).then(verdict);
  verdict();
}

/**
 * type-graphql's class-validator check of input objects and argument classes, as its built-in one
 * does it (the same rules, options and ArgumentValidationError), without its per-call costs: it
 * `require`s class-validator on every argument, and class-validator gathers a class's rules anew
 * on every call.
 */
export const validateArguments: ValidatorFn = (value) => {
  if (!isObject(value)) return;
  if (!Array.isArray(value)) return validateObject(value);
  // As validateOrReject over Promise.all: the first item that fails is the one reported.
  return Promise.all(value.filter(isObject).map(async (item) => validateObject(item))).then(() => undefined);
};
