import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { DEFAULT_PORTS } from '@strata/contracts';
import {
  DEVELOPMENT_ADMIN_PASSWORD,
  DEVELOPMENT_ENCRYPTION_KEYS,
  DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY,
} from '@strata/platform';
import { CHART, CREDENTIALS, ROOT, find, render, type K8sObject } from './chart.js';

/** Every app the chart deploys: the routing table's services and the gateway. */
const APPS = Object.keys(DEFAULT_PORTS);

/** The validating model of each kind the chart makes (kubernetes-models: the API's own schemas). */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
};

const container = (deployment: K8sObject) => deployment.spec.template.spec.containers[0];
const envNames = (c: { env?: { name: string }[] }) => (c.env ?? []).map((e) => e.name);

describe('the Helm chart', () => {
  const objects = render(CREDENTIALS);

  it('renders objects the Kubernetes API schemas accept, each name once', () => {
    for (const object of objects) {
      const model = MODELS[`${object.apiVersion}/${object.kind}`];
      if (!model) throw new Error(`no model for ${object.apiVersion} ${object.kind}`);
      expect(() => new model(object).validate()).not.toThrow();
    }
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    const kinds: Record<string, number> = {};
    for (const o of objects) kinds[o.kind] = (kinds[o.kind] ?? 0) + 1;
    expect(kinds).toEqual({
      ConfigMap: 2, // the services' and the migrations Job's
      Deployment: APPS.length,
      HorizontalPodAutoscaler: 4, // gateway, data, compute and the workers scale by default
      Ingress: 1,
      Job: 2, // the migrations and the upgrade steps
      NetworkPolicy: APPS.length,
      PodDisruptionBudget: APPS.length,
      Secret: 2, // the services' and the migrations Job's
      Service: APPS.length,
      ServiceAccount: 1,
    });
  });

  it('gives every app a Deployment, Service, disruption budget and network policy on its port', () => {
    for (const app of APPS) {
      const name = `strata-${app}`;
      const deployment = find(objects, 'Deployment', name);
      const port = DEFAULT_PORTS[app as keyof typeof DEFAULT_PORTS];
      expect(container(deployment).ports).toEqual([
        { name: 'http', containerPort: port },
        { name: 'metrics', containerPort: 9464 },
      ]);
      const selector = deployment.spec.selector.matchLabels;
      expect(selector).toEqual({ 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': 'strata' });
      expect(deployment.spec.template.metadata.labels).toMatchObject(selector);
      expect(find(objects, 'Service', name).spec.selector).toEqual(selector);
      expect(find(objects, 'Service', name).spec.ports.map((p: { port: number }) => p.port)).toEqual([port, 9464]);
      expect(find(objects, 'PodDisruptionBudget', name).spec).toEqual({
        maxUnavailable: 1,
        selector: { matchLabels: selector },
      });
      expect(find(objects, 'NetworkPolicy', name).spec.podSelector.matchLabels).toEqual(selector);
    }
  });

  it('runs each app as its image says, probed on /healthz and /readyz, unprivileged', () => {
    for (const app of APPS) {
      const c = container(find(objects, 'Deployment', `strata-${app}`));
      const image = app === 'compute-worker' ? 'compute' : app;
      expect(c.image).toBe(`ghcr.io/strata/strata-${image}:0.1.0`);
      expect(c.args).toContain('dist/main.js');
      // isolated-vm needs Node without its startup snapshot, in the API (code checks) and the workers.
      expect(c.args.includes('--no-node-snapshot')).toBe(app === 'compute' || app === 'compute-worker');
      expect(c.args.includes('worker')).toBe(app === 'compute-worker');
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe.httpGet.path).toBe(app === 'gateway' ? '/healthz' : '/readyz');
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    }
    const worker = find(objects, 'Deployment', 'strata-compute-worker');
    // COMPUTE_WORKER_STOP_MS (45 s by default) of draining, and 15 s more.
    expect(worker.spec.template.spec.terminationGracePeriodSeconds).toBe(60);
    expect(container(worker).env).toContainEqual({ name: 'COMPUTE_WORKER_ISOLATES', value: '4' });
    const slower = render({
      ...CREDENTIALS,
      services: { 'compute-worker': { env: { COMPUTE_WORKER_STOP_MS: 90_500 } } },
    });
    expect(find(slower, 'Deployment', 'strata-compute-worker').spec.template.spec.terminationGracePeriodSeconds).toBe(
      106,
    );
  });

  it('routes {base_url} to the gateway, which applies the routing table, and {auth_url} to auth', () => {
    const rules = find(objects, 'Ingress', 'strata').spec.rules;
    expect(rules.map((r: any) => [r.host, r.http.paths[0].path, r.http.paths[0].backend.service.name])).toEqual([
      ['api.strata.example.com', '/', 'strata-gateway'],
      ['auth.strata.example.com', '/', 'strata-auth'],
    ]);
    const env = find(objects, 'ConfigMap', 'strata-env').data!;
    expect(env['AUTH_ISSUER']).toBe('https://auth.strata.example.com/oidc');
    expect(env['AUTH_INTERNAL_URL']).toBe('http://strata-auth:8081');
    const gateway = container(find(objects, 'Deployment', 'strata-gateway'));
    expect(gateway.env).toContainEqual({
      name: 'COMPUTE_WORKER_SERVICE_URL',
      value: 'http://strata-compute-worker:8087',
    });
  });

  it('puts endpoint calls on a host of their own when ingress.endpointsHost is set', () => {
    // Not set: no third host, and the gateway routes endpoint calls on {base_url}.
    expect(envNames(container(find(objects, 'Deployment', 'strata-gateway')))).not.toContain('GATEWAY_ENDPOINTS_HOST');
    const split = render({
      ...CREDENTIALS,
      ingress: { endpointsHost: 'endpoints.strata.example.com', endpointsTlsSecret: 'endpoints-tls' },
    });
    const ingress = find(split, 'Ingress', 'strata').spec;
    expect(ingress.rules.map((r: any) => [r.host, r.http.paths.map((p: any) => [p.path, p.pathType])])).toEqual([
      ['api.strata.example.com', [['/', 'Prefix']]],
      ['auth.strata.example.com', [['/', 'Prefix']]],
      ['endpoints.strata.example.com', [['/data/workspace/', 'Prefix']]],
    ]);
    expect(ingress.rules[2].http.paths[0].backend.service.name).toBe('strata-gateway');
    expect(ingress.tls).toEqual([{ hosts: ['endpoints.strata.example.com'], secretName: 'endpoints-tls' }]);
    // The gateway routes only endpoint calls there, and no endpoint call on the other hosts.
    expect(container(find(split, 'Deployment', 'strata-gateway')).env).toContainEqual({
      name: 'GATEWAY_ENDPOINTS_HOST',
      value: 'endpoints.strata.example.com',
    });
    expect(() => render({ ...CREDENTIALS, ingress: { endpointsHost: 'api.strata.example.com' } })).toThrow(
      'ingress.endpointsHost (api.strata.example.com) must be a host of its own',
    );
  });

  describe('NATS users (nats.auth)', () => {
    const NATS_APPS = APPS.filter((app) => app !== 'gateway');
    const password = (app: string) => `Pw${app.replace('-', '')}0123456789abcdef`;
    const withNats = (auth: object, secrets: object = {}) =>
      render({ ...CREDENTIALS, nats: { auth }, secrets: { ...CREDENTIALS.secrets, ...secrets } });
    const natsPasswords = Object.fromEntries(NATS_APPS.map((app) => [app, password(app)]));

    it('renders none by default: no users, no NATS credentials', () => {
      expect(objects.filter((o) => o.metadata.name === 'strata-nats-auth')).toEqual([]);
      for (const app of APPS) {
        expect(
          envNames(container(find(objects, 'Deployment', `strata-${app}`))).filter((n) => n.startsWith('NATS_')),
        ).toEqual([]);
      }
      expect(
        Object.keys(find(objects, 'Secret', 'strata-secrets').stringData!).filter((k) => k.startsWith('NATS_')),
      ).toEqual([]);
    });

    it('password: a user, a password from the Secret and an inbox of its own per service; the server its users', () => {
      const rendered = withNats({ mode: 'password' }, { natsPasswords });
      for (const app of NATS_APPS) {
        const env = container(find(rendered, 'Deployment', `strata-${app}`)).env;
        expect(env).toEqual(
          expect.arrayContaining([
            { name: 'NATS_USER', value: `strata-${app}` },
            { name: 'NATS_INBOX_PREFIX', value: `_INBOX.strata-${app}` },
            {
              name: 'NATS_PASSWORD',
              valueFrom: {
                secretKeyRef: { name: 'strata-secrets', key: `NATS_PASSWORD_${app.toUpperCase().replace('-', '_')}` },
              },
            },
          ]),
        );
        expect(
          find(rendered, 'Secret', 'strata-secrets').stringData![
            `NATS_PASSWORD_${app.toUpperCase().replace('-', '_')}`
          ],
        ).toBe(password(app));
      }
      expect(envNames(container(find(rendered, 'Deployment', 'strata-gateway')))).not.toContain('NATS_USER');
      // The migrations do not connect to NATS: they get no NATS credential.
      const job = find(rendered, 'Job', 'strata-migrate');
      expect(JSON.stringify(job)).not.toContain('NATS_PASSWORD');
      const authConf = find(rendered, 'ConfigMap', 'strata-nats-auth').data!['auth.conf']!;
      expect(authConf).toContain('user: "strata-compute-worker"');
      expect(authConf).toContain('password: $NATS_PASSWORD_COMPUTE_WORKER');
      expect(JSON.stringify(rendered.filter((o) => o.kind !== 'Secret'))).not.toContain(password('data'));
      // A changed password rolls the pods, as any credential does.
      const rotated = withNats(
        { mode: 'password' },
        { natsPasswords: { ...natsPasswords, data: 'Another0123456789' } },
      );
      const checksum = (r: K8sObject[]) =>
        find(r, 'Deployment', 'strata-data').spec.template.metadata.annotations['checksum/secret'];
      expect(checksum(rotated)).not.toBe(checksum(rendered));
    });

    it('refuses a missing or unusable credential, naming it', () => {
      const { orchestration: _left, ...missing } = natsPasswords;
      expect(() => withNats({ mode: 'password' }, { natsPasswords: missing })).toThrow(
        'secrets.natsPasswords.orchestration is required with nats.auth.mode password (or existingSecret)',
      );
      expect(() =>
        withNats({ mode: 'password' }, { natsPasswords: { ...natsPasswords, data: 'has-a-dash-0123456' } }),
      ).toThrow('secrets.natsPasswords.data must be 16 to 128 letters and digits, starting with a letter');
      expect(() => withNats({ mode: 'nkey' }, { natsNkeySeeds: {} })).toThrow(
        'secrets.natsNkeySeeds.auth is required with nats.auth.mode nkey (or existingSecret)',
      );
      expect(() => render({ existingSecret: 'platform-credentials', nats: { auth: { mode: 'nkey' } } })).toThrow(
        'nats.auth.nkeys.auth (the public key of its seed) is required with nats.auth.mode nkey',
      );
      expect(() => withNats({ mode: 'token' })).toThrow('nats.auth.mode must be none, password or nkey, not token');
    });

    it("with an existing Secret, reads each service's credential from its key", () => {
      const rendered = render({ existingSecret: 'platform-credentials', nats: { auth: { mode: 'password' } } });
      expect(container(find(rendered, 'Deployment', 'strata-compute-worker')).env).toContainEqual({
        name: 'NATS_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'platform-credentials', key: 'NATS_PASSWORD_COMPUTE_WORKER' } },
      });
    });
  });

  it("migrates every schema in npm start's order, as a hook reading hook copies of the settings and credentials", () => {
    const job = find(objects, 'Job', 'strata-migrate');
    const start = readFileSync(join(ROOT, 'scripts/start.sh'), 'utf8');
    const order = [...start.matchAll(/node apps\/([a-z-]+)\/dist\/main\.js migrate/g)].map((m) => m[1]);
    expect(order).toHaveLength(7);
    const init = job.spec.template.spec.initContainers;
    expect(init.map((c: { name: string }) => c.name)).toEqual(order.map((app) => `migrate-${app}`));
    for (const c of init) expect(c.args).toEqual(['dist/main.js', 'migrate']);
    const hook = {
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    };
    expect(job.metadata.annotations).toEqual({ ...hook, 'helm.sh/hook-weight': '0' });
    // Made before the Job (a lower weight), since the release's own objects do not exist yet on a first install.
    expect(find(objects, 'ConfigMap', 'strata-migrate-env').metadata.annotations).toEqual({
      ...hook,
      'helm.sh/hook-weight': '-10',
    });
    expect(find(objects, 'Secret', 'strata-migrate-secrets').metadata.annotations).toEqual({
      ...hook,
      'helm.sh/hook-weight': '-10',
    });
    expect(find(objects, 'ConfigMap', 'strata-migrate-env').data).toEqual(
      find(objects, 'ConfigMap', 'strata-env').data,
    );
    // Each migration reads what its service reads: its whole configuration is checked first.
    for (const c of init) {
      const app = c.name.replace('migrate-', '');
      const service = container(find(objects, 'Deployment', `strata-${app}`));
      const secrets = (entries: any[]) =>
        entries
          .filter((e) => e.valueFrom)
          .map((e) => e.valueFrom.secretKeyRef.key)
          .sort();
      expect(secrets(c.env)).toEqual(secrets(service.env));
      expect(new Set(c.env.filter((e: any) => e.valueFrom).map((e: any) => e.valueFrom.secretKeyRef.name))).toEqual(
        new Set(['strata-migrate-secrets']),
      );
    }
    // The release's own objects are not hooks: kept by rollbacks, removed by uninstall.
    for (const [kind, name] of [
      ['ConfigMap', 'strata-env'],
      ['Secret', 'strata-secrets'],
    ] as const) {
      expect(find(objects, kind, name).metadata.annotations).toBeUndefined();
    }
  });

  it("runs every schema's due upgrade steps in npm start's order once the release runs, with its own settings", () => {
    const job = find(objects, 'Job', 'strata-upgrade');
    const start = readFileSync(join(ROOT, 'scripts/start.sh'), 'utf8');
    const order = [...start.matchAll(/node apps\/([a-z-]+)\/dist\/main\.js upgrade/g)].map((m) => m[1]);
    // Every schema's, but storage's: it has no upgrade step yet (docs/storage.md).
    const migrated = [...start.matchAll(/node apps\/([a-z-]+)\/dist\/main\.js migrate/g)].map((m) => m[1]);
    expect(order).toEqual(migrated.filter((app) => app !== 'storage'));
    // npm start runs them after every migration, before any service starts.
    expect(start.indexOf('main.js upgrade')).toBeGreaterThan(start.lastIndexOf('main.js migrate'));
    expect(start.indexOf('main.js upgrade')).toBeLessThan(start.indexOf('run auth'));
    const init = job.spec.template.spec.initContainers;
    expect(init.map((c: { name: string }) => c.name)).toEqual(order.map((app) => `upgrade-${app}`));
    for (const c of init) expect(c.args).toEqual(['dist/main.js', 'upgrade']);
    expect(job.metadata.annotations).toEqual({
      'helm.sh/hook': 'post-install,post-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      'helm.sh/hook-weight': '0',
    });
    for (const c of init) {
      const app = c.name.replace('upgrade-', '');
      const service = container(find(objects, 'Deployment', `strata-${app}`));
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'strata-env' } }]);
      const secrets = (entries: any[]) => entries.filter((e) => e.valueFrom).map((e) => e.valueFrom.secretKeyRef);
      expect(secrets(c.env)).toEqual(secrets(service.env));
    }
  });

  it('prints numbers whole where Helm reads them as float64, and rolls the pods when settings or credentials change', () => {
    const big = render({
      ...CREDENTIALS,
      env: { COMPUTE_MAX_OUTPUT_BYTES: 2097152 },
      services: { compute: { env: { COMPUTE_DOCUMENT_BYTES_PER_RUN: 10485760, COMPUTE_CPU_MS: 1.5 } } },
    });
    expect(find(big, 'ConfigMap', 'strata-env').data!['COMPUTE_MAX_OUTPUT_BYTES']).toBe('2097152');
    const compute = container(find(big, 'Deployment', 'strata-compute'));
    expect(compute.env).toContainEqual({ name: 'COMPUTE_DOCUMENT_BYTES_PER_RUN', value: '10485760' });
    expect(compute.env).toContainEqual({ name: 'COMPUTE_CPU_MS', value: '1.5' });

    const annotations = (rendered: K8sObject[]) =>
      find(rendered, 'Deployment', 'strata-data').spec.template.metadata.annotations;
    const before = annotations(objects);
    expect(annotations(big)['checksum/env']).not.toBe(before['checksum/env']);
    expect(annotations(big)['checksum/secret']).toBe(before['checksum/secret']);
    const rotated = render({ ...CREDENTIALS, secrets: { ...CREDENTIALS.secrets, adminPassword: 'another-password' } });
    expect(annotations(rotated)['checksum/secret']).not.toBe(before['checksum/secret']);
    expect(annotations(rotated)['checksum/env']).toBe(before['checksum/env']);
  });

  it('keeps the credentials in the Secret only, and uses an existing Secret when named', () => {
    const secret = find(objects, 'Secret', 'strata-secrets');
    expect(secret.stringData).toEqual({
      DATABASE_URL: CREDENTIALS.database.url,
      STRATA_ENCRYPTION_KEYS: CREDENTIALS.secrets.encryptionKeys,
      STRATA_FUNCTIONS_PRINCIPAL_KEY: CREDENTIALS.secrets.functionsPrincipalKey,
      STRATA_ADMIN_EMAIL: CREDENTIALS.secrets.adminEmail,
      STRATA_ADMIN_PASSWORD: CREDENTIALS.secrets.adminPassword,
    });
    const elsewhere = JSON.stringify(objects.filter((o) => o.kind !== 'Secret'));
    for (const value of [
      'db-password-123',
      CREDENTIALS.secrets.encryptionKeys,
      CREDENTIALS.secrets.functionsPrincipalKey,
      'admin-password-789',
    ]) {
      expect(elsewhere).not.toContain(value);
    }
    const auth = container(find(objects, 'Deployment', 'strata-auth'));
    expect(auth.env).toContainEqual({
      name: 'STRATA_ADMIN_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'strata-secrets', key: 'STRATA_ADMIN_PASSWORD' } },
    });
    // Only auth reads the administrator's credentials; only auth, compute and webhooks (which asks
    // auth what a subscription's owner may see) the principal key.
    for (const app of APPS) {
      const names = envNames(container(find(objects, 'Deployment', `strata-${app}`)));
      expect(names.includes('STRATA_ADMIN_PASSWORD')).toBe(app === 'auth');
      expect(names.includes('STRATA_FUNCTIONS_PRINCIPAL_KEY')).toBe(
        ['auth', 'compute', 'compute-worker', 'webhooks'].includes(app),
      );
    }

    const external = render({ existingSecret: 'platform-credentials' });
    expect(external.filter((o) => o.kind === 'Secret')).toEqual([]);
    expect(
      find(external, 'Deployment', 'strata-auth').spec.template.metadata.annotations['checksum/secret'],
    ).toBeUndefined();
    const refs = JSON.stringify(external).match(/"secretKeyRef":\{"name":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    expect(new Set(refs)).toEqual(new Set(['"secretKeyRef":{"name":"platform-credentials"']));
  });

  it('refuses to render without credentials or an existing Secret, naming the value', () => {
    expect(() => render({})).toThrow('database.url is required (or existingSecret)');
    expect(() => render({ ...CREDENTIALS, secrets: { ...CREDENTIALS.secrets, encryptionKeys: '' } })).toThrow(
      'secrets.encryptionKeys is required (or existingSecret)',
    );
  });

  describe('refuses development settings, naming the value', () => {
    // The published ones, as the services know them (libs/platform): the chart's copy must not drift.
    const developmentKey = DEVELOPMENT_ENCRYPTION_KEYS.split(':')[1]!;
    const withSecrets = (secrets: object) => ({ ...CREDENTIALS, secrets: { ...CREDENTIALS.secrets, ...secrets } });

    it.each([
      ['env', { ...CREDENTIALS, env: { STRATA_ENV: 'development' } }],
      [
        'services.compute-worker.env',
        { ...CREDENTIALS, services: { 'compute-worker': { env: { STRATA_ENV: 'development' } } } },
      ],
    ])('STRATA_ENV=development in %s', (where, values) => {
      expect(() => render(values)).toThrow(
        `${where}.STRATA_ENV=development is refused: it makes the services accept the published development key and password`,
      );
    });

    it.each([
      ['alone', DEVELOPMENT_ENCRYPTION_KEYS],
      ['beside a key of its own', `${CREDENTIALS.secrets.encryptionKeys},2:${developmentKey}`],
    ])('the development encryption key, %s', (_, encryptionKeys) => {
      expect(() => render(withSecrets({ encryptionKeys }))).toThrow(
        "secrets.encryptionKeys holds the development encryption key, which is published in Strata's source",
      );
    });

    it('the development key and password, as credentials or as settings', () => {
      expect(() => render(withSecrets({ adminPassword: DEVELOPMENT_ADMIN_PASSWORD }))).toThrow(
        "secrets.adminPassword is the development password, which is published in Strata's source",
      );
      expect(() => render(withSecrets({ functionsPrincipalKey: DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY }))).toThrow(
        "secrets.functionsPrincipalKey is the development key, which is published in Strata's source",
      );
      // Given as settings, they would reach the pods all the same (a container's env wins over the Secret's).
      expect(() => render({ ...CREDENTIALS, env: { STRATA_ENCRYPTION_KEYS: DEVELOPMENT_ENCRYPTION_KEYS } })).toThrow(
        'env.STRATA_ENCRYPTION_KEYS holds the development encryption key',
      );
      expect(() =>
        render({ ...CREDENTIALS, services: { auth: { env: { STRATA_ADMIN_PASSWORD: DEVELOPMENT_ADMIN_PASSWORD } } } }),
      ).toThrow('services.auth.env.STRATA_ADMIN_PASSWORD is the development password');
    });

    it('renders a production release: STRATA_ENV=production, credentials of its own', () => {
      expect(find(objects, 'ConfigMap', 'strata-env').data!['STRATA_ENV']).toBe('production');
      expect(() => render({ ...CREDENTIALS, env: { STRATA_ENV: 'production' } })).not.toThrow();
    });
  });

  it('sets only settings the services document (docs/configuration.md)', () => {
    const documented = new Set(
      [...readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8').matchAll(/^\| ([A-Z0-9_ /…]+) \|/gm)].flatMap((m) =>
        m[1]!.split(/ \/ | … /).map((name) => name.trim()),
      ),
    );
    const expanded = (name: string) =>
      documented.has(name) ||
      // "RATE_LIMIT_READ_PER_MINUTE / WRITE / …" and "AUTH_SERVICE_URL … INBOUND_SERVICE_URL" rows.
      /^(AUTH|DATA|COMPUTE|ORCHESTRATION|WEBHOOKS|INBOUND)_SERVICE_URL$/.test(name);
    const set = new Set<string>(Object.keys(find(objects, 'ConfigMap', 'strata-env').data!));
    // With every optional setting the chart knows: NATS users, the endpoints' own host.
    const everything = render({
      ...CREDENTIALS,
      nats: { auth: { mode: 'password' } },
      ingress: { endpointsHost: 'endpoints.strata.example.com' },
      secrets: {
        ...CREDENTIALS.secrets,
        natsPasswords: Object.fromEntries(
          APPS.filter((app) => app !== 'gateway').map((app) => [app, 'Pw0123456789abcdef']),
        ),
      },
    });
    for (const rendered of [objects, everything])
      for (const app of APPS)
        for (const name of envNames(container(find(rendered, 'Deployment', `strata-${app}`)))) set.add(name);
    const unknown = [...set].filter((name) => !expanded(name));
    expect(unknown).toEqual([]);
  });

  it('makes a ServiceMonitor per app only when asked and the Prometheus Operator is installed', () => {
    const asked = { ...CREDENTIALS, metrics: { serviceMonitor: { enabled: true } } };
    expect(render(asked).filter((o) => o.kind === 'ServiceMonitor')).toEqual([]);
    const monitors = render(asked, { apiVersions: ['monitoring.coreos.com/v1'] }).filter(
      (o) => o.kind === 'ServiceMonitor',
    );
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual(APPS.map((app) => `strata-${app}`).sort());
    expect(monitors[0]!.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '30s' }]);
  });

  it('leaves replicas to the autoscaler where one is enabled', () => {
    for (const app of APPS) {
      const deployment = find(objects, 'Deployment', `strata-${app}`);
      const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === `strata-${app}`);
      expect(deployment.spec.replicas === undefined).toBe(hpa !== undefined);
    }
  });
});

describe("the chart's values.schema.json", () => {
  const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
  const defaults = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

  it('accepts values.yaml as it is, with credentials', () => {
    expect(validate(defaults)).toBe(true);
    expect(validate({ ...defaults, ...CREDENTIALS })).toBe(true);
  });

  it('refuses values of the wrong shape, naming where', () => {
    const bad = structuredClone(defaults);
    bad.services.data.replicas = 'two';
    bad.metrics.port = 70000;
    bad.services.cache = bad.services.data;
    bad.secrets.encryptionKeys = 'not-a-key';
    bad.secrets.functionsPrincipalKey = 'k';
    bad.secrets.adminPassword = 'short';
    bad.nats.prefix = 'Strata-1';
    bad.ingress.endpointsHost = 'https://endpoints.example.com';
    bad.nats.auth.mode = 'token';
    bad.secrets.natsPasswords = { data: 'short' };
    bad.nats.auth.nkeys = { webhooks: 'SUAM' };
    expect(validate(bad)).toBe(false);
    const where = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    expect(where).toEqual(
      expect.arrayContaining([
        '/services/data/replicas must be integer',
        '/metrics/port must be <= 65535',
        '/services must NOT have additional properties',
        expect.stringMatching(/^\/secrets\/encryptionKeys must match pattern/),
        expect.stringMatching(/^\/secrets\/functionsPrincipalKey must match pattern/),
        '/secrets/adminPassword must NOT have fewer than 8 characters',
        expect.stringMatching(/^\/nats\/prefix must match pattern/),
        expect.stringMatching(/^\/ingress\/endpointsHost must match pattern/),
        '/nats/auth/mode must be equal to one of the allowed values',
        expect.stringMatching(/^\/secrets\/natsPasswords\/data must match pattern/),
        expect.stringMatching(/^\/nats\/auth\/nkeys\/webhooks must match pattern/),
      ]),
    );
  });

  it('refuses the development settings wherever they are given', () => {
    const bad = structuredClone(defaults);
    bad.secrets.encryptionKeys = `${CREDENTIALS.secrets.encryptionKeys},${DEVELOPMENT_ENCRYPTION_KEYS.replace('1:', '2:')}`;
    bad.secrets.functionsPrincipalKey = DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY;
    bad.secrets.adminPassword = DEVELOPMENT_ADMIN_PASSWORD;
    bad.env.STRATA_ENV = 'development';
    bad.services.inbound.env.STRATA_ENV = 'development';
    bad.services.auth.env.STRATA_ADMIN_PASSWORD = DEVELOPMENT_ADMIN_PASSWORD;
    expect(validate(bad)).toBe(false);
    const where = new Set((validate.errors ?? []).filter((e) => e.keyword === 'not').map((e) => e.instancePath));
    expect(where).toEqual(
      new Set([
        '/secrets/encryptionKeys',
        '/secrets/functionsPrincipalKey',
        '/secrets/adminPassword',
        '/env/STRATA_ENV',
        '/services/inbound/env/STRATA_ENV',
        '/services/auth/env/STRATA_ADMIN_PASSWORD',
      ]),
    );
    expect(validate({ ...defaults, ...CREDENTIALS, env: { ...defaults.env, STRATA_ENV: 'production' } })).toBe(true);
  });
});
