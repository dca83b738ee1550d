import { availableParallelism } from 'node:os';
import { IsBoolean, IsIn, IsInt, IsString, IsUrl, Matches, Max, Min, ValidateBy } from 'class-validator';
import { dnsServersProblem } from '@strata/egress';
import { DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY, NotDefaultInProduction, Secret, ServiceConfig } from '@strata/platform';

/** Endpoint isolates of a worker by default: one a core, at least 2, at most 16. */
export function defaultEndpointIsolates(cores: number = availableParallelism()): number {
  return Math.min(16, Math.max(2, cores));
}

/** Settings of the compute service and its sandbox workers (environment variables; initialisers are the defaults). */
export class ComputeConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  COMPUTE_PORT = 8083;

  /**
   * Where a sandbox worker serves endpoint calls (`/endpoints/{path}`, run on
   * its own isolates) and its health (`/healthz`, `/readyz`); 0 takes any free
   * port, named in its "worker ready" line. The gateway sends endpoint calls
   * here (COMPUTE_ENDPOINTS_SERVICE_URL).
   */
  @IsInt()
  @Min(0)
  @Max(65535)
  COMPUTE_WORKER_PORT = 8087;

  /** Isolates one worker process runs at once (its concurrency); docs/compute.md says how to size it. */
  @IsInt()
  @Min(1)
  @Max(64)
  COMPUTE_WORKER_ISOLATES = 4;

  /**
   * Isolates one worker keeps for endpoint runs alone, so that a synchronous call
   * never waits behind background jobs. A worker with them all busy stops
   * taking endpoint calls over NATS (another worker, or a free background
   * isolate, takes them; with none, the call waits in the worker's queue,
   * COMPUTE_ENDPOINT_QUEUE_*). By default the machine's cores
   * (`os.availableParallelism()`), at least 2 and at most 16.
   */
  @IsInt()
  @Min(1)
  @Max(64)
  COMPUTE_WORKER_ENDPOINT_ISOLATES = defaultEndpointIsolates();

  /**
   * Endpoint calls one worker holds waiting for an isolate, every workspace
   * together (docs/compute.md, "When every isolate is busy"); past it a call is
   * answered 503 with `Retry-After`. 0 queues none.
   */
  @IsInt()
  @Min(0)
  @Max(10_000)
  COMPUTE_ENDPOINT_QUEUE_MAX = 64;

  /** Endpoint calls of one workspace one worker holds waiting for an isolate (503 past it). */
  @IsInt()
  @Min(0)
  @Max(10_000)
  COMPUTE_ENDPOINT_QUEUE_WORKSPACE_MAX = 32;

  /**
   * How long an endpoint call may wait for an isolate before it is answered 503
   * (`Retry-After`) with nothing run; 0 queues none. Its run's timeoutMs starts when it starts.
   */
  @IsInt()
  @Min(0)
  @Max(60_000)
  COMPUTE_ENDPOINT_QUEUE_WAIT_MS = 2000;

  /**
   * Background isolates a worker keeps from backlog runs while runs of the work
   * queue keep arriving during a backlog (one in the last 2 s), so that a light
   * workspace's run finds one free instead of waiting for a long backlog run to
   * end (docs/compute.md, "Fair share"). At most COMPUTE_WORKER_ISOLATES - 1; 0 keeps none.
   */
  @IsInt()
  @Min(0)
  @Max(63)
  COMPUTE_WORKER_RESERVED_ISOLATES = 1;

  /**
   * Isolates of each sandbox process of a worker: its isolates live in
   * ceil(COMPUTE_WORKER_ISOLATES / this) processes (and its endpoint isolates in
   * more), so an isolate V8 loses costs one such process, not the worker
   * (docs/sandbox.md, "Sandbox processes"; memory sizing there).
   */
  @IsInt()
  @Min(1)
  @Max(64)
  COMPUTE_SANDBOX_ISOLATES_PER_PROCESS = 2;

  /**
   * How long a sandbox process that lost an isolate may finish its other runs
   * before it is ended (those runs then fail as SandboxLost); it holds the lost
   * isolate's memory meanwhile.
   */
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  COMPUTE_SANDBOX_DRAIN_MS = 30_000;

  /**
   * Sandbox processes of one engine that lost an isolate and still finish
   * their other runs, at most: each holds its lost isolate's memory (docs/sandbox.md,
   * "Sizing memory"); past it the oldest is ended at once and its runs fail as SandboxLost.
   */
  @IsInt()
  @Min(1)
  @Max(64)
  COMPUTE_SANDBOX_MAX_DRAINING = 2;

  /**
   * Isolates of one worker that one workspace's runs may hold at once (each
   * engine: background and endpoint), so that one workspace never holds them
   * all; its further runs wait while other workspaces' go past. 0: one fewer
   * than the engine's isolates (at least 1).
   */
  @IsInt()
  @Min(0)
  @Max(64)
  COMPUTE_WORKSPACE_ISOLATES = 0;

  /** api calls one run may make in all; later calls reject inside the function. */
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  COMPUTE_MAX_API_CALLS = 1000;

  /**
   * How long a run may wait on nothing (no api call or timer pending) before
   * its isolate is looked at and, idle too, the run ends failed as NeverSettled.
   */
  @IsInt()
  @Min(10)
  @Max(3_600_000)
  COMPUTE_IDLE_CHECK_MS = 1000;

  /**
   * How long a worker asked to stop (SIGTERM, SIGINT) may take to finish its
   * runs and write their outcomes before it exits anyway (status 1): keep it
   * above COMPUTE_WALL_MS plus a few seconds, and Kubernetes'
   * terminationGracePeriodSeconds above it. Its runs cut short are failed as
   * WorkerLost through their leases.
   */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  COMPUTE_WORKER_STOP_MS = 45_000;

  /** Largest request body an endpoint trigger accepts, in bytes (413 above). */
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  COMPUTE_ENDPOINT_MAX_BODY_BYTES = 1024 * 1024;

  /** How far an hmac-mode endpoint call's x-signature-timestamp may be from now, either way, in seconds. */
  @IsInt()
  @Min(1)
  @Max(3600)
  COMPUTE_ENDPOINT_SIGNATURE_TOLERANCE_S = 300;

  /**
   * How long past an endpoint's timeoutMs the API waits for the worker's answer
   * (the run's claim and outcome are written within it) before it answers 504.
   */
  @IsInt()
  @Min(100)
  @Max(60_000)
  COMPUTE_ENDPOINT_GRACE_MS = 5000;

  /**
   * How long a replica keeps the triggers it looked up to start runs (an
   * endpoint's, the event-driven ones watching an event) with their functions'
   * versions (0: read every time). A change to the workspace's triggers or
   * functions drops them at once on every replica (a NATS notice); this bounds
   * how stale one can be when a notice is lost.
   */
  @IsInt()
  @Min(0)
  @Max(60_000)
  COMPUTE_TRIGGER_CACHE_MS = 2000;

  /** Runs an isolate serves (each in a fresh context) before it is replaced. */
  @IsInt()
  @Min(1)
  @Max(100_000)
  COMPUTE_RUNS_PER_ISOLATE = 100;

  /** Heap limit of a run's isolate, in MiB. */
  @IsInt()
  @Min(8)
  @Max(4096)
  COMPUTE_MEMORY_MB = 64;

  /** CPU time a run may use, in milliseconds (across awaits). */
  @IsInt()
  @Min(10)
  @Max(300_000)
  COMPUTE_CPU_MS = 10_000;

  /** Wall-clock time a run may take, in milliseconds (the spec's 30 seconds). */
  @IsInt()
  @Min(50)
  @Max(300_000)
  COMPUTE_WALL_MS = 30_000;

  /** Bytes of `api.log` output kept per run, and entries; the rest is dropped and the run marked truncated. */
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  COMPUTE_MAX_LOG_BYTES = 256 * 1024;

  @IsInt()
  @Min(1)
  @Max(100_000)
  COMPUTE_MAX_LOG_ENTRIES = 1000;

  /** Largest return value (as JSON) a run may produce; a larger one fails the run. */
  @IsInt()
  @Min(1024)
  @Max(64 * 1024 * 1024)
  COMPUTE_MAX_OUTPUT_BYTES = 1024 * 1024;

  /** How long a worker's hold on a running run lasts without renewal (renewed every third of it). */
  @IsInt()
  @Min(1000)
  @Max(600_000)
  COMPUTE_LEASE_MS = 30_000;

  /**
   * A run its job carried is claimed (`running`, under a lease) at its first
   * call into the platform or once a worker has held it this long; a run that
   * ends before either is recorded with its outcome in one statement. 0 claims
   * every run before it starts.
   */
  @IsInt()
  @Min(0)
  @Max(5000)
  COMPUTE_CLAIM_AFTER_MS = 50;

  /**
   * A workspace that queued more runs than this in the last
   * COMPUTE_BACKLOG_WINDOW_MS has its next jobs put on the backlog queue, which
   * workers serve behind every other job (docs/compute.md, "Fair share").
   */
  @IsInt()
  @Min(1)
  @Max(100_000)
  COMPUTE_BACKLOG_AFTER = 16;

  /** The window of COMPUTE_BACKLOG_AFTER: a workspace's demand is the runs it queued within it. */
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  COMPUTE_BACKLOG_WINDOW_MS = 5_000;

  /**
   * A workspace whose runs made the sandbox lose this many isolates within
   * COMPUTE_LOST_ISOLATE_WINDOW_MS (each loss restarts a worker) is suspended:
   * none of its runs starts for COMPUTE_SUSPEND_MS (docs/compute.md,
   * "Suspended workspaces"). 0 never suspends.
   */
  @IsInt()
  @Min(0)
  @Max(1000)
  COMPUTE_SUSPEND_AFTER_LOST_ISOLATES = 5;

  /** The window of COMPUTE_SUSPEND_AFTER_LOST_ISOLATES: losses older than this are forgotten. */
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  COMPUTE_LOST_ISOLATE_WINDOW_MS = 600_000;

  /** How long a suspended workspace's runs are refused (each further loss meanwhile starts it again). */
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  COMPUTE_SUSPEND_MS = 600_000;

  /** How often this API replica looks for runs whose worker was lost and for jobs not taken. */
  @IsInt()
  @Min(50)
  @Max(600_000)
  COMPUTE_SWEEP_INTERVAL_MS = 5000;

  /** A queued run not taken after this long has its job published again (the claim makes repeats harmless). */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  COMPUTE_REPUBLISH_AFTER_MS = 30_000;

  /** Whether this API replica runs the sweeps (replicas share them: every step is conditional). */
  @IsBoolean()
  COMPUTE_SWEEPER_ENABLED = true;

  /** Finished function runs (their logs, results and documents with them) are deleted this many days after they ended. */
  @IsInt()
  @Min(1)
  @Max(3650)
  COMPUTE_RUN_RETENTION_DAYS = 30;

  /**
   * Whether this API replica runs the retention sweep (finished runs, and record events'
   * (event, trigger) pairs past the stream's age); replicas share the rows.
   */
  @IsBoolean()
  COMPUTE_RETENTION_SWEEP_ENABLED = true;

  @IsInt()
  @Min(50)
  @Max(86_400_000)
  COMPUTE_RETENTION_SWEEP_INTERVAL_MS = 60_000;

  /**
   * The key the auth and compute services share to derive each workspace's function
   * principal secret (base64 of 32 bytes; docs/compute.md, "The function principal").
   * Changing it on both rotates every function principal's secret.
   */
  @Secret()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'must be the base64 of 32 bytes' })
  @NotDefaultInProduction(DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY)
  STRATA_FUNCTIONS_PRINCIPAL_KEY = DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY;

  /** The data service's own URL, which `api` calls as the function principal (not through the gateway). */
  @IsUrl({ require_tld: false, require_protocol: true })
  DATA_SERVICE_URL = 'http://127.0.0.1:8082';

  /** Deadline of one call from a function to the data service. */
  @IsInt()
  @Min(100)
  @Max(120_000)
  COMPUTE_API_TIMEOUT_MS = 15_000;

  /** How long a document kept with `api.storeAsJSON` is kept, in hours. */
  @IsInt()
  @Min(1)
  @Max(24 * 365)
  COMPUTE_DOCUMENT_TTL_HOURS = 24 * 7;

  /** Documents one run may keep, and their bytes together (JSON, UTF-8). */
  @IsInt()
  @Min(1)
  @Max(1000)
  COMPUTE_DOCUMENTS_PER_RUN = 20;

  @IsInt()
  @Min(1024)
  @Max(256 * 1024 * 1024)
  COMPUTE_DOCUMENT_BYTES_PER_RUN = 5 * 1024 * 1024;

  /** Deadline of one `api.fetch` / `api.httpPost` exchange (connect, request, response). */
  @IsInt()
  @Min(100)
  @Max(120_000)
  COMPUTE_FETCH_TIMEOUT_MS = 10_000;

  /** Largest response body `api.fetch` reads; a larger one fails the call. */
  @IsInt()
  @Min(1024)
  @Max(64 * 1024 * 1024)
  COMPUTE_FETCH_MAX_BYTES = 1024 * 1024;

  /**
   * Lets `api.fetch` reach addresses that are not global unicast (loopback, private,
   * link-local...): local development and tests only. The allowed-domains list applies anyway.
   */
  @IsBoolean()
  COMPUTE_FETCH_ALLOW_PRIVATE = false;

  /**
   * DNS servers `api.fetch` resolves names with (comma-separated `ip`, `ip:port` or
   * `[ipv6]:port`); empty: the system's (`/etc/resolv.conf`). Queried through c-ares on
   * the event loop, never getaddrinfo on the libuv thread pool (@strata/egress).
   */
  @IsString()
  @ValidateBy({
    name: 'dnsServers',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && dnsServersProblem(value) === undefined,
      defaultMessage: (args) => `is not a list of DNS servers: ${dnsServersProblem(String(args?.value)) ?? ''}`,
    },
  })
  COMPUTE_FETCH_DNS_SERVERS = '';

  /** How long each try of an `api.fetch` name lookup waits for the DNS server. */
  @IsInt()
  @Min(10)
  @Max(30_000)
  COMPUTE_FETCH_DNS_TIMEOUT_MS = 2000;

  /** How many times each DNS server is tried before the lookup fails with a timeout. */
  @IsInt()
  @Min(1)
  @Max(10)
  COMPUTE_FETCH_DNS_TRIES = 2;

  /** How deep runs may start each other with `api.invokeTrigger` (a run it starts is one level deeper). */
  @IsInt()
  @Min(0)
  @Max(50)
  COMPUTE_MAX_INVOCATION_DEPTH = 5;

  /**
   * Which processes turn record events into runs of event-driven triggers:
   * `worker` (each sandbox worker runs the events it takes on its own isolates,
   * with no hop between processes, and hands on or queues what it has no room
   * for) or `api` (the compute API replicas, which offer each run to a worker
   * over NATS). Either way they share one durable consumer.
   */
  @IsIn(['worker', 'api'])
  COMPUTE_EVENT_CONSUMERS: 'worker' | 'api' = 'worker';

  /** Whether this process takes its share of record events, when COMPUTE_EVENT_CONSUMERS names its kind. */
  @IsBoolean()
  COMPUTE_EVENT_TRIGGERS_ENABLED = true;

  /** Record events this replica turns into runs at once. */
  @IsInt()
  @Min(1)
  @Max(256)
  COMPUTE_EVENT_CONCURRENCY = 16;

  /**
   * How long an event's consumer (a worker with no isolate free, or the API)
   * waits for another worker to take a run offered to it (written and started
   * by that worker) before it queues the run; 0 never offers.
   */
  @IsInt()
  @Min(0)
  @Max(10_000)
  COMPUTE_EVENT_OFFER_TIMEOUT_MS = 1000;

  /** Whether this API replica fires scheduled triggers (replicas share the work: SKIP LOCKED claims). */
  @IsBoolean()
  COMPUTE_SCHEDULER_ENABLED = true;

  /** How often the scheduler looks for due occurrences (lateness is at most about this). */
  @IsInt()
  @Min(20)
  @Max(60_000)
  COMPUTE_SCHEDULER_INTERVAL_MS = 250;
}
