export { InboundConfig } from './inbound.config.js';
export { createInboundApp, migrateInbound } from './create-inbound-app.js';
export type { InboundAppOptions } from './app.module.js';
export { InboundSweeps } from './dispatch/inbound-sweeps.js';
export { reencryptInbound, upgradeInbound } from './events/reencrypt-arrivals.js';
