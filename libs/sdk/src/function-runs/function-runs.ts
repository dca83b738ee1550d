import { ITERATOR_PAGE_SIZE as SIZE, walkPages } from '../http/pages.js';
import { Resource, segment, type CallOptions } from '../http/resource.js';
import type {
  FunctionRun,
  FunctionRunDetail,
  FunctionRunList,
  FunctionRunListQuery,
  FunctionRunWithOutput,
  RerunInput,
  RunDocument,
} from './types.js';

/** A run that has ended: anything but queued and running. */
export const isFinal = (run: Pick<FunctionRun, 'status'>): boolean =>
  run.status !== 'queued' && run.status !== 'running';

/** `{data_base}/function-runs`: every execution of a function (`client.runs` is its deprecated name). */
export class FunctionRuns extends Resource {
  /** Filtered by `jobId`, each run comes with its `result` and `logs` (the spec's "test results"). */
  list(
    query: FunctionRunListQuery & { readonly jobId: string },
    options?: CallOptions,
  ): Promise<FunctionRunList<FunctionRunWithOutput>>;
  list(query?: FunctionRunListQuery, options?: CallOptions): Promise<FunctionRunList>;
  list(query: FunctionRunListQuery = {}, options?: CallOptions): Promise<FunctionRunList> {
    return this.read('/function-runs', { ...query }, options);
  }

  /** Every run the filters match, newest first, page after page (see `walkPages`). */
  iterate(
    query: Omit<FunctionRunListQuery, 'page' | 'limit'> = {},
    options?: CallOptions,
  ): AsyncGenerator<FunctionRun> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list({ ...query, limit: SIZE, page: index + 1 }, options);
      return { items: page.runs, total: page.total };
    });
  }

  get(id: string, options?: CallOptions): Promise<FunctionRunDetail> {
    return this.read(`/function-runs/${segment(id)}`, undefined, options);
  }

  /**
   * The run of a job (a test run's or an execute's `jobId`) with its `result` and `logs`, or
   * undefined while it is not written yet.
   */
  async byJobId(jobId: string, options?: CallOptions): Promise<FunctionRunWithOutput | undefined> {
    return (await this.list({ jobId }, options)).runs[0];
  }

  /**
   * Polls until the job's run has ended, then answers its detail. Gives up (TimeoutError) after
   * `timeoutMs` (default 60 000), polling every `intervalMs` (default 250).
   */
  async waitForJob(
    jobId: string,
    { timeoutMs = 60_000, intervalMs = 250, signal }: { timeoutMs?: number; intervalMs?: number } & CallOptions = {},
  ): Promise<FunctionRunDetail> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    for (;;) {
      const run = await this.byJobId(jobId, { signal: stop });
      if (run && isFinal(run)) return this.get(run.id, { signal: stop });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, intervalMs);
        stop.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(stop.reason instanceof Error ? stop.reason : new Error('aborted'));
          },
          { once: true },
        );
      });
    }
  }

  /** Runs the function again with the run's stored parameters (and `overrideParams` over them). */
  rerun(id: string, input: RerunInput = {}, options?: CallOptions): Promise<{ jobId: string; message: string }> {
    return this.call('POST', `/function-runs/${segment(id)}/rerun`, { body: input, signal: options?.signal });
  }

  rerunHistory(
    id: string,
    options?: CallOptions,
  ): Promise<{ originalRunId: string; rerunCount: number; reruns: FunctionRun[] }> {
    return this.read(`/function-runs/${segment(id)}/rerun-history`, undefined, options);
  }

  /** What the run stored with `api.storeAsJSON` (until it expires). */
  documents(runId: string, options?: CallOptions): Promise<{ documents: RunDocument[] }> {
    return this.read(`/function-runs/${segment(runId)}/documents`, undefined, options);
  }

  document(runId: string, documentId: string, options?: CallOptions): Promise<RunDocument> {
    return this.read(`/function-runs/${segment(runId)}/documents/${segment(documentId)}`, undefined, options);
  }
}
