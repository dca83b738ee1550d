export { GatewayConfig } from './gateway.config.js';
export { createGateway, listen, upstreams } from './create-gateway.js';
