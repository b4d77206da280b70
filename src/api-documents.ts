import type { Host } from './platform/auth/permissions';
import { buildHostSchema } from './schema';
import { compileRoute } from '../rest-compat/compile';
import { HOST_API, hostOpenApi } from '../rest-compat/host-documents';
import { MAX_URL_LENGTH } from './server/protocol-checks';

/** A host's /v1/openapi.json built without starting the host: the TypeScript client is generated from it. */
export async function hostOpenApiDocument(host: Host): Promise<Record<string, unknown>> {
  const schema = await buildHostSchema(host);
  const api = HOST_API[host];
  return hostOpenApi(api, schema, api.routes.map((row) => compileRoute(schema, row)), MAX_URL_LENGTH);
}
