import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

/** The hosts the client is generated for, each with the file its types are written to (under src/generated/). */
export const GENERATED_FILES = { core: 'core.ts', pro: 'pro.ts' } as const;

/**
 * An OpenAPI document as the TypeScript types openapi-fetch is typed by (`paths`, `components`,
 * `operations`). The same function writes the committed files (`npm run generate`) and checks them
 * for staleness (test/client/generated.test.ts), so the two can only differ when the API changed.
 */
export async function renderTypes(document: Record<string, unknown>): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], { exportType: false, alphabetize: true, silent: true });
  return COMMENT_HEADER + astToString(ast);
}
