import { validateOrReject, ValidationError, ValidatorOptions } from 'class-validator';
import { ArgumentValidationError, ValidatorFn } from 'type-graphql';

// type-graphql's defaults for its built-in check, which Keel keeps.
const OPTIONS: ValidatorOptions = { skipMissingProperties: true, forbidUnknownValues: false };

const isObject = (value: unknown): value is object => value !== null && typeof value === 'object';

/**
 * type-graphql's class-validator check of input objects and argument classes, as its built-in one
 * does it, with class-validator imported once: the built-in `require`s it on every argument it
 * checks, which costs a module resolution per request.
 */
export const validateArguments: ValidatorFn = async (value) => {
  if (!isObject(value)) return;
  try {
    if (Array.isArray(value)) await Promise.all(value.filter(isObject).map((item) => validateOrReject(item, OPTIONS)));
    else await validateOrReject(value, OPTIONS);
  } catch (errors) {
    throw new ArgumentValidationError(errors as ValidationError[]);
  }
};
