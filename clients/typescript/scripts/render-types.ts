import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';

/** The hosts the client is generated for, each with the file its types are written to (under src/generated/). */
export const GENERATED_FILES = { core: 'core.ts', pro: 'pro.ts' } as const;

/**
 * An OpenAPI document as the TypeScript types openapi-fetch is typed by (`paths`, `components`,
 * `operations`). The same function writes the committed files (`npm run generate`) and checks them
 * for staleness (test/client/generated-types.test.ts), so the two can only differ when the API changed.
 */
export async function renderTypes(document: Record<string, unknown>): Promise<string> {
  // Schemas of open objects (JSON scalars, error details) take any property, not none.
  const ast = await openapiTS(document as unknown as OpenAPI3, { alphabetize: true, emptyObjectsUnknown: true, silent: true });
  return COMMENT_HEADER + astToString(ast);
}
