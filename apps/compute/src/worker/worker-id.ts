/** The worker's own name on the runs it holds. */
export const WORKER_ID = `worker-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
