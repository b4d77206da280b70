/**
 * The engine-status module's face: what other modules may use of it. The order-book engine's status on this node.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { EngineStatusService } from './engine-status.service';

export { createEngineStatusServices } from './engine-status-services';

/** The engine-status module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface EngineStatusServices {
  engineStatus: EngineStatusService;
}
