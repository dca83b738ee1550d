import { InboundEvents1765000000000 } from './1765000000000-inbound-events.js';
import { InboundAutoPersist1765000000001 } from './1765000000001-inbound-auto-persist.js';

export const INBOUND_SCHEMA = 'inbound';
export const MIGRATIONS = [InboundEvents1765000000000, InboundAutoPersist1765000000001];
