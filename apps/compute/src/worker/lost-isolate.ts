import { Logger } from '@nestjs/common';

const logger = new Logger('SandboxWorker');
let stopping = false;

/**
 * isolated-vm lost an isolate for good: V8 ran out of memory where the memory
 * limit could not stop the run (a Map or an object grown without end), and the
 * isolate's thread now sleeps in V8's out-of-memory handler; or a builtin that
 * ignores interrupts (`new Array(1e8).fill(1)`) did not end within 5 s of the
 * run's timeout (`Script failed to terminate`), and isolated-vm suspended the
 * thread. The run on it has ended already (as out of memory, or timed out). The worker stops as it does on SIGTERM:
 * it takes no new work, finishes the runs under way on its other isolates and
 * writes their outcomes, then ends by that signal, and its supervisor (the
 * start script, a Kubernetes Deployment) starts a new one. Only a signal ends
 * the process: `process.exit` would wait on the lost thread forever.
 */
export function stopAfterLostIsolate(message: string): void {
  if (stopping) return;
  stopping = true;
  logger.error({ msg: 'an isolate was lost; the worker finishes its runs and stops', reason: message });
  process.kill(process.pid, 'SIGTERM');
}
