import { loadConfigOrExit } from '@strata/platform';
import { GatewayConfig } from './gateway.config.js';
import { createGateway, listen } from './create-gateway.js';

export async function run(): Promise<void> {
  const config = loadConfigOrExit(GatewayConfig, 'strata-gateway');
  const server = await listen(
    createGateway(config),
    config.GATEWAY_PORT,
    config.HOST,
    config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  );
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'log', service: 'gateway', msg: `listening on ${config.GATEWAY_PORT}` })}\n`,
  );
  const stop = (): void => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
