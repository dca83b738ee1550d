import process from 'node:process';

// Every test process (and the services and workers the tests start) fails a statement that takes a
// pooled connection while a transaction is open in the same flow (libs/db/src/pool-guard.ts).
process.env.STRATA_POOL_CHECK ??= 'throw';
