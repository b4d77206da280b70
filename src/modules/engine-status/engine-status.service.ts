import { hostname } from 'node:os';
import type { Environment } from '../../platform/auth/permissions';

export class EngineStatusService {
  private readonly startedAt = Date.now();
  readonly nodeId = `${hostname()}:${process.pid}`;

  constructor(private readonly environment: Environment) {}

  status() {
    return {
      status: 'RUNNING',
      nodeId: this.nodeId,
      uptimeSeconds: Math.floor((Date.now() - this.startedAt) / 1000),
      serverTime: new Date(),
      environment: this.environment,
    };
  }
}
