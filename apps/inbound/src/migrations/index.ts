import { InboundEvents1765000000000 } from './1765000000000-inbound-events.js';

export const INBOUND_SCHEMA = 'inbound';
export const MIGRATIONS = [InboundEvents1765000000000];
