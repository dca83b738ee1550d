/**
 * A sandbox process's stop is the engine's to make: Ctrl-C in a terminal (or a script's TERM to
 * every process under it) reaches this process too, and ending here would cut the runs under way
 * that the worker's graceful stop lets finish. The engine ends it when its runs are done, or the
 * channel closing does. Imported first by `sandbox-process.ts`, so the signals are ignored from
 * before isolated-vm loads (a signal in the start-up window would otherwise end a starting process).
 */
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
