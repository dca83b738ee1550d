/**
 * `pnpm bench` → the read cases of the data service (bench/src/read-cases.ts) on
 * a 10-property collection of `BENCH_QUERY_RECORDS` (100 000) records, each
 * against a column-per-property yardstick in the same run: the same rows copied
 * into a plain typed table with the same indexes, served by a minimal
 * node:http + pg server in its own process, called by the same client at the
 * same concurrency; and our compiled SQL against the typed SQL straight through
 * pg, so the storage gap and the request overhead are told apart.
 *
 * `BENCH_QUERY_RUNS` (200) runs per case, `BENCH_QUERY_EXPLAIN=1` prints
 * EXPLAIN (ANALYZE, BUFFERS) of both statements of every case.
 */
import pg from 'pg';
import { runReadCases } from './read-cases.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const CONCURRENCY = 4;

async function main(): Promise<void> {
  const services = await startUnlimitedServices();
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: CONCURRENCY });
  try {
    const { token, base } = await benchWorkspace(services);
    await runReadCases({
      base,
      token,
      db,
      workspace: 'bench',
      databaseUrl: services.databaseUrl,
      records: Number(process.env['BENCH_QUERY_RECORDS'] ?? 100_000),
      runs: Number(process.env['BENCH_QUERY_RUNS'] ?? 200),
      concurrency: CONCURRENCY,
      explain: process.env['BENCH_QUERY_EXPLAIN'] === '1',
    });
  } finally {
    await db.end();
    await services.stop();
  }
}

await main();
