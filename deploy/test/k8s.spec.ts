import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { Deployment, StatefulSet, type IDeployment, type IStatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy, type INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget, type IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service, type IService } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { CHART, CREDENTIALS, ROOT } from './chart.js';

/**
 * k8s/: the dependencies' manifests and their kustomize overlays (docs/deployment.md, "k8s/").
 * Checked as written (every check below), and, where a kubectl binary is installed, as
 * `kubectl kustomize` builds them (the same checks on the built objects).
 */

const K8S = join(ROOT, 'k8s');
const OVERLAY = join(K8S, 'overlays/dev');
/** Secrets the base names but leaves to the operator (the dev overlay makes them). */
const EXTERNAL_SECRETS = ['temporal-db'];
/** Every pod of k8s/ carries it; the base's NetworkPolicy selects by it. */
const PART_OF = { 'app.kubernetes.io/part-of': 'strata-dependencies' };

/** The validating model of each kind k8s/ may hold (kubernetes-models: the API's own schemas). */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  [key: string]: unknown;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  patches?: { path?: string; patch?: string; target?: unknown }[];
  labels?: unknown[];
  [key: string]: unknown;
}

/** A workload's pods, as the checks read them. */
interface Workload {
  object: Manifest;
  pod: IPodSpec;
  labels: Record<string, string>;
  /** Volume claim templates' names (a StatefulSet's), with their requested size. */
  claims: Map<string, string>;
}

const KUSTOMIZATION_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'patches', 'labels']);
const rel = (path: string) => relative(ROOT, path);
const id = (o: Manifest) => `${o.kind}/${o.metadata.name}`;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

function documents(text: string, where: string): unknown[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${where}: not YAML: ${doc.errors[0]!.message}`);
      return doc.toJS({ maxAliasCount: 0 }) as unknown;
    })
    .filter((doc) => doc !== null);
}

const manifests = (file: string) => documents(readFileSync(file, 'utf8'), rel(file)) as Manifest[];
const kustomizationOf = (dir: string) => parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;

/** The objects a kustomization's resources make, with its namespace set and its patches not applied. */
function resources(dir: string): Manifest[] {
  const k = kustomizationOf(dir);
  const objects = (k.resources ?? []).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? resources(path) : manifests(path);
  });
  if (k.namespace)
    for (const o of objects) if (o.kind !== 'Namespace') o.metadata = { ...o.metadata, namespace: k.namespace };
  return objects;
}

function workloads(objects: Manifest[]): Workload[] {
  return objects.flatMap((object) => {
    if (!['Deployment', 'StatefulSet', 'Job'].includes(object.kind)) return [];
    const spec = (object as unknown as IDeployment).spec!;
    const claims = new Map<string, string>();
    for (const t of (object as unknown as IStatefulSet).spec?.volumeClaimTemplates ?? [])
      claims.set(t.metadata?.name ?? '', String(t.spec?.resources?.requests?.['storage']));
    return [{ object, pod: spec.template.spec!, labels: spec.template.metadata?.labels ?? {}, claims }];
  });
}

/** The containers a patch of a workload names (a partial object: no model reads it). */
const patchedContainers = (patch: Manifest): IContainer[] =>
  (patch as { spec?: { template?: { spec?: { containers?: IContainer[] } } } }).spec?.template?.spec?.containers ?? [];
const containersOf = (pod: IPodSpec): IContainer[] => [...(pod.initContainers ?? []), ...pod.containers];
const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const find = (objects: Manifest[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const secretValues = (o: Manifest): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(o.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])),
  ...o.stringData,
});

/** `image:tag` or `image@sha256:…`, the tag not `latest`. */
function imageProblem(image: string | undefined): string | undefined {
  if (!image) return 'no image';
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return undefined;
  const tag = /:([^:/]+)$/.exec(image)?.[1];
  if (!tag) return `${image} has no tag`;
  if (tag === 'latest') return `${image} uses latest`;
  return undefined;
}

const UNITS: Record<string, number> = {
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};
/** A Kubernetes quantity (100m, 512Mi, 2) as a number. */
function quantity(q: string | number): number {
  const m = /^([0-9.]+)(m|k|M|G|Ki|Mi|Gi|Ti)?$/.exec(String(q));
  if (!m) throw new Error(`not a quantity: ${q}`);
  return Number(m[1]) * UNITS[m[2] ?? '']!;
}

/**
 * Every problem of one set of objects (a kustomization's, or a build's): schemas, unique names,
 * pinned images, resources, non-root and hardened pods, probes, references between objects.
 */
function objectProblems(objects: Manifest[], externalSecrets: string[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const model = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!model) problems.push(`${id(o)}: no model for ${o.apiVersion} ${o.kind}`);
    else
      try {
        new model(o).validate();
      } catch (err) {
        problems.push(`${id(o)}: ${(err as Error).message}`);
      }
  }
  const names = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i))) problems.push(`${name} twice`);

  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  for (const { object, pod, labels, claims } of workloads(objects)) {
    const where = id(object);
    const selector = (object.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels;
    if (object.kind !== 'Job' && !matches(selector, labels)) problems.push(`${where}: selector not on its pods`);
    if (!matches(PART_OF, labels)) problems.push(`${where}: pods not labelled ${JSON.stringify(PART_OF)}`);
    if (!policies.some((p) => matches((p as unknown as INetworkPolicy).spec?.podSelector?.matchLabels, labels)))
      problems.push(`${where}: no NetworkPolicy selects its pods`);
    if (pod.automountServiceAccountToken !== false) problems.push(`${where}: mounts a service account token`);
    if (pod.enableServiceLinks !== false) problems.push(`${where}: service links enabled`);
    const podSecurity = pod.securityContext ?? {};
    if (podSecurity.seccompProfile?.type !== 'RuntimeDefault') problems.push(`${where}: no RuntimeDefault seccomp`);

    const volumes = new Set([...(pod.volumes ?? []).map((v) => v.name), ...claims.keys()]);
    for (const v of pod.volumes ?? []) {
      if (v.configMap && !find(objects, 'ConfigMap', v.configMap.name!))
        problems.push(`${where}: ConfigMap ${v.configMap.name} missing`);
      if (v.secret && !find(objects, 'Secret', v.secret.secretName!) && !externalSecrets.includes(v.secret.secretName!))
        problems.push(`${where}: Secret ${v.secret.secretName} missing`);
    }
    for (const c of containersOf(pod)) {
      const at = `${where} container ${c.name}`;
      const image = imageProblem(c.image);
      if (image) problems.push(`${at}: ${image}`);
      const r = c.resources;
      if (!r?.requests?.['cpu'] || !r.requests['memory'] || !r.limits?.['memory'])
        problems.push(`${at}: needs requests.cpu, requests.memory and limits.memory`);
      const s = c.securityContext ?? {};
      if ((s.runAsNonRoot ?? podSecurity.runAsNonRoot) !== true) problems.push(`${at}: not runAsNonRoot`);
      if (!((s.runAsUser ?? podSecurity.runAsUser ?? 0) > 0)) problems.push(`${at}: no non-root runAsUser`);
      if (s.allowPrivilegeEscalation !== false) problems.push(`${at}: allows privilege escalation`);
      if (s.readOnlyRootFilesystem !== true) problems.push(`${at}: root filesystem writable`);
      if (!s.capabilities?.drop?.includes('ALL')) problems.push(`${at}: capabilities not dropped`);
      const ports = new Set((c.ports ?? []).map((p) => p.name));
      if (object.kind !== 'Job')
        for (const probe of ['readinessProbe', 'livenessProbe'] as const) {
          const p = c[probe];
          if (!p) problems.push(`${at}: no ${probe}`);
          const port = p?.httpGet?.port ?? p?.tcpSocket?.port;
          if (typeof port === 'string' && !ports.has(port)) problems.push(`${at}: ${probe} on unknown port ${port}`);
        }
      for (const m of c.volumeMounts ?? [])
        if (!volumes.has(m.name)) problems.push(`${at}: mounts unknown volume ${m.name}`);
      for (const e of c.env ?? []) {
        const cm = e.valueFrom?.configMapKeyRef;
        if (cm && find(objects, 'ConfigMap', cm.name!)?.data?.[cm.key] === undefined)
          problems.push(`${at}: env ${e.name}: ConfigMap ${cm.name} has no ${cm.key}`);
        const sk = e.valueFrom?.secretKeyRef;
        const secret = sk && find(objects, 'Secret', sk.name!);
        if (sk && (secret ? secretValues(secret)[sk.key] === undefined : !externalSecrets.includes(sk.name!)))
          problems.push(`${at}: env ${e.name}: Secret ${sk.name} has no ${sk.key}`);
      }
      for (const from of c.envFrom ?? []) {
        if (from.configMapRef && !find(objects, 'ConfigMap', from.configMapRef.name!))
          problems.push(`${at}: ConfigMap ${from.configMapRef.name} missing`);
        const name = from.secretRef?.name;
        if (name && !find(objects, 'Secret', name) && !externalSecrets.includes(name))
          problems.push(`${at}: Secret ${name} missing`);
      }
    }
    const serviceName = (object.spec as { serviceName?: string }).serviceName;
    if (object.kind === 'StatefulSet') {
      const governing = serviceName && find(objects, 'Service', serviceName);
      if (!governing || (governing.spec as IService['spec'])!.clusterIP !== 'None')
        problems.push(`${where}: serviceName ${serviceName} is not a headless Service here`);
    }
  }

  for (const service of objects.filter((o) => o.kind === 'Service')) {
    const spec = (service as unknown as IService).spec!;
    const targets = workloads(objects).filter((w) => matches(spec.selector, w.labels));
    if (targets.length === 0) problems.push(`${id(service)}: selects no pods`);
    for (const port of spec.ports ?? []) {
      const reached = targets.some((w) =>
        w.pod.containers.some((c) =>
          (c.ports ?? []).some((p) =>
            typeof port.targetPort === 'string'
              ? p.name === port.targetPort
              : p.containerPort === (port.targetPort ?? port.port),
          ),
        ),
      );
      if (targets.length > 0 && !reached) problems.push(`${id(service)}: port ${port.port} reaches no container port`);
    }
  }
  for (const pdb of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
    const selector = (pdb as unknown as IPodDisruptionBudget).spec?.selector?.matchLabels;
    if (!workloads(objects).some((w) => matches(selector, w.labels))) problems.push(`${id(pdb)}: selects no pods`);
  }
  return problems;
}

/** The configuration files inside ConfigMaps against the pods that read them. */
function configProblems(objects: Manifest[]): string[] {
  const problems: string[] = [];
  const workload = (kind: string, name: string) => {
    const w = workloads(objects).find((x) => x.object.kind === kind && x.object.metadata.name === name);
    if (!w) throw new Error(`${kind}/${name} missing`);
    return { ...w, container: w.pod.containers[0]! };
  };
  const portOf = (c: IContainer, name: string) => c.ports?.find((p) => p.name === name)?.containerPort;

  // NATS: its ports, and JetStream's store on the volume, smaller than the volume.
  const nats = workload('StatefulSet', 'nats');
  const conf = find(objects, 'ConfigMap', 'nats-config')?.data?.['nats.conf'] ?? '';
  const setting = (name: string) => new RegExp(`^\\s*${name}:\\s*(\\S+)\\s*$`, 'm').exec(conf)?.[1];
  if (Number(setting('port')) !== portOf(nats.container, 'nats')) problems.push('nats.conf port is not the nats port');
  if (Number(setting('http_port')) !== portOf(nats.container, 'monitor'))
    problems.push('nats.conf http_port is not the monitor port');
  if (!/^jetstream\s*\{/m.test(conf)) problems.push('nats.conf does not enable JetStream');
  const store = nats.container.volumeMounts?.find((m) => m.mountPath === setting('store_dir'));
  if (!store || !nats.claims.has(store.name)) problems.push('JetStream store_dir is not on the persistent volume');
  const size = /^(\d+)([KMGT])B?$/i.exec(setting('max_file_store') ?? '');
  const maxFile = size ? Number(size[1]) * 1024 ** ('KMGT'.indexOf(size[2]!.toUpperCase()) + 1) : Infinity;
  if (store && !(maxFile < quantity(nats.claims.get(store.name)!)))
    problems.push('JetStream max_file_store is not below the volume size');

  // The collector: OTLP on the ports the pod and Service declare, pipelines of defined components.
  const collector = workload('Deployment', 'otel-collector');
  const config = parse(find(objects, 'ConfigMap', 'otel-collector-config')?.data?.['config.yaml'] ?? '{}');
  const port = (endpoint: unknown) => Number(/:(\d+)$/.exec(String(endpoint))?.[1]);
  const otlp = config.receivers?.otlp?.protocols ?? {};
  if (port(otlp.grpc?.endpoint) !== 4317 || portOf(collector.container, 'otlp-grpc') !== 4317)
    problems.push('the collector does not take OTLP/gRPC on 4317');
  if (port(otlp.http?.endpoint) !== 4318 || portOf(collector.container, 'otlp-http') !== 4318)
    problems.push('the collector does not take OTLP/HTTP on 4318');
  if (port(config.extensions?.health_check?.endpoint) !== portOf(collector.container, 'health'))
    problems.push('the collector health_check is not on the probed port');
  const pipelines = Object.entries<Record<string, string[]>>(config.service?.pipelines ?? {});
  if (pipelines.length === 0) problems.push('the collector has no pipeline');
  for (const [name, pipeline] of pipelines)
    for (const section of ['receivers', 'processors', 'exporters'])
      for (const component of pipeline[section] ?? [])
        if (!config[section]?.[component]) problems.push(`pipeline ${name}: ${section} ${component} not defined`);
  for (const extension of config.service?.extensions ?? [])
    if (!config.extensions?.[extension]) problems.push(`extension ${extension} not defined`);
  return problems;
}

/** The container port `host:port` reaches through a Service of these objects, if any. */
function reach(objects: Manifest[], host: string, port: number): number | undefined {
  const service = find(objects, 'Service', host) as unknown as IService | undefined;
  const entry = service?.spec?.ports?.find((p) => p.port === port);
  if (!service || !entry) return undefined;
  for (const w of workloads(objects).filter((x) => matches(service.spec!.selector, x.labels)))
    for (const c of w.pod.containers)
      for (const p of c.ports ?? [])
        if (typeof entry.targetPort === 'string' ? p.name === entry.targetPort : p.containerPort === port)
          return p.containerPort;
  return undefined;
}

/** The Helm values the docs install the chart with beside an overlay: `helm install … -n NS -f k8s/…`. */
function documentedValues(): { namespace: string; file: string }[] {
  const docs = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
  return [...docs.matchAll(/helm install \S+ deploy\/helm\/strata -n (\S+) -f (k8s\/\S+\.ya?ml)/g)].map((m) => ({
    namespace: m[1]!,
    file: join(ROOT, m[2]!),
  }));
}

function merge(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return over;
  if (typeof over !== 'object' || over === null || Array.isArray(over)) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = merge(out[k], v);
  return out;
}

/** The chart's values this file reads (values.schema.json has them all). */
interface ChartValues {
  database: { url: string };
  nats: { url: string };
  otlpEndpoint: string;
  temporal: { address: string; namespace: string };
}

/** The chart's values file against the overlay's objects: schema, and every address reaching its Service. */
function valuesProblems(objects: Manifest[], file: string, namespace: string): string[] {
  const problems: string[] = [];
  const given = parse(readFileSync(file, 'utf8'));
  const values = merge(merge(parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')), given), {
    secrets: CREDENTIALS.secrets,
  }) as ChartValues;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(
    JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')),
  );
  if (!validate(values))
    for (const e of validate.errors ?? []) problems.push(`values ${e.instancePath} ${e.message ?? ''}`);

  const expectReach = (what: string, address: string, port: number, containerPort: number) => {
    const [host, p] = address.split(':');
    if (host!.includes('.')) problems.push(`${what}: ${host} is not a Service of the release's namespace`);
    if (Number(p) !== port) problems.push(`${what}: port ${p}, expected ${port}`);
    const reached = reach(objects, host!, Number(p));
    if (reached !== containerPort) problems.push(`${what}: ${address} reaches ${reached ?? 'nothing'} here`);
  };
  const url = (value: string) => new URL(value);
  const nats = url(values.nats.url);
  expectReach('nats.url', nats.host, 4222, 4222);
  const db = url(values.database.url);
  expectReach('database.url', db.host, 5432, 5432);
  const credentials = find(objects, 'Secret', 'postgres-credentials');
  if (!credentials || secretValues(credentials)['STRATA_DB_PASSWORD'] !== decodeURIComponent(db.password))
    problems.push("database.url: the password is not postgres-credentials' STRATA_DB_PASSWORD");
  const init = Object.values(find(objects, 'ConfigMap', 'postgres-init')?.data ?? {}).join('\n');
  const database = db.pathname.slice(1);
  if (
    !init.includes(`CREATE ROLE ${db.username} LOGIN`) ||
    !init.includes(`CREATE DATABASE ${database} OWNER ${db.username}`)
  )
    problems.push(`database.url: postgres-init makes no role ${db.username} owning ${database}`);
  const otlp = url(values.otlpEndpoint);
  if (otlp.protocol !== 'http:') problems.push('otlpEndpoint: the collector takes plain HTTP here');
  expectReach('otlpEndpoint', otlp.host, 4318, 4318);
  expectReach('temporal.address', values.temporal.address, 7233, 7233);
  const registered = workloads(objects)
    .find((w) => w.object.metadata.name === 'temporal-namespace')
    ?.pod.containers[0]?.env?.find((e) => e.name === 'TEMPORAL_NAMESPACE')?.value;
  if (registered !== values.temporal.namespace)
    problems.push(`temporal.namespace ${values.temporal.namespace}, registered: ${registered}`);
  const overlayNamespace = objects.find((o) => o.kind === 'Service')?.metadata.namespace;
  if (overlayNamespace !== namespace)
    problems.push(`helm installs in ${namespace}, the overlay is in ${overlayNamespace}`);
  return problems;
}

/** The patches' resources against the base's: an overlay for a laptop asks for less, never more. */
function lowerResourcesProblems(dir: string): string[] {
  const problems: string[] = [];
  const k = kustomizationOf(dir);
  const base = resources(dir);
  for (const entry of k.patches ?? []) {
    const patch = manifests(join(dir, entry.path!))[0]!;
    const target = find(base, patch.kind, patch.metadata.name);
    for (const c of patchedContainers(patch)) {
      const original = target && workloads([target])[0]?.pod.containers.find((x) => x.name === c.name);
      for (const group of ['requests', 'limits'] as const)
        for (const [name, value] of Object.entries(c.resources?.[group] ?? {})) {
          const before = original?.resources?.[group]?.[name];
          if (before === undefined || quantity(value) > quantity(before))
            problems.push(`${entry.path}: ${c.name} ${group}.${name} ${value} is not below the base's ${before}`);
        }
    }
  }
  return problems;
}

const kustomizationDirs = yamlFiles(K8S)
  .filter((f) => f.endsWith('/kustomization.yaml'))
  .map((f) => dirname(f));
/** The base and each overlay: checked whole, so references between their parts resolve. */
const roots = [
  join(K8S, 'base'),
  ...readdirSync(join(K8S, 'overlays'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(K8S, 'overlays', entry.name)),
];
const KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

describe('k8s/ as written', () => {
  it('has kustomizations whose resources and patches exist, each patch naming an object it overlays', () => {
    const problems: string[] = [];
    const listed = new Map<string, string>();
    for (const dir of kustomizationDirs) {
      const k = kustomizationOf(dir);
      const at = rel(dir);
      if (k.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || k.kind !== 'Kustomization')
        problems.push(`${at}: not a kustomize.config.k8s.io/v1beta1 Kustomization`);
      // Only fields these checks understand (no deprecated commonLabels, patchesStrategicMerge, bases…).
      for (const field of Object.keys(k))
        if (!KUSTOMIZATION_FIELDS.has(field)) problems.push(`${at}: unexpected field ${field}`);
      for (const entry of k.resources ?? []) {
        const path = join(dir, entry);
        if (!existsSync(path)) problems.push(`${at}: resource ${entry} does not exist`);
        else if (statSync(path).isDirectory() && !existsSync(join(path, 'kustomization.yaml')))
          problems.push(`${at}: resource ${entry} is a folder without kustomization.yaml`);
        else if (statSync(path).isFile()) {
          if (listed.has(path)) problems.push(`${rel(path)} listed by ${listed.get(path)} and ${at}`);
          listed.set(path, at);
        }
      }
      if (problems.length > 0) continue;
      const overlaid = resources(dir);
      for (const entry of k.patches ?? []) {
        const path = entry.path && join(dir, entry.path);
        if (!path || entry.patch || entry.target) {
          problems.push(`${at}: a patch must be a file of its own (path only)`);
          continue;
        }
        if (!existsSync(path)) {
          problems.push(`${at}: patch ${entry.path} does not exist`);
          continue;
        }
        listed.set(path, at);
        const docs = manifests(path);
        const patch = docs[0];
        if (docs.length !== 1 || !patch?.apiVersion || !patch.kind || !patch.metadata?.name) {
          problems.push(`${at}: patch ${entry.path} is not one object with apiVersion, kind and name`);
          continue;
        }
        const target = overlaid.find(
          (o) => o.apiVersion === patch.apiVersion && o.kind === patch.kind && o.metadata.name === patch.metadata.name,
        );
        if (!target) {
          problems.push(`${at}: patch ${entry.path} targets ${id(patch)}, which is not in its resources`);
          continue;
        }
        // A strategic merge adds a container it does not find: a misspelt name would run a second one.
        const existing = new Set(workloads([target]).flatMap((w) => containersOf(w.pod).map((c) => c.name)));
        for (const c of patchedContainers(patch))
          if (!existing.has(c.name))
            problems.push(`${at}: patch ${entry.path} names no container ${c.name} of ${id(target)}`);
      }
    }
    // Every file is a kustomization, a resource or patch of one, or a values file the docs install with.
    const values = new Set(documentedValues().map((v) => v.file));
    for (const file of yamlFiles(K8S))
      if (!file.endsWith('/kustomization.yaml') && !listed.has(file) && !values.has(file))
        problems.push(`${rel(file)} is in no kustomization`);
    expect(problems).toEqual([]);
  });

  it('holds objects the Kubernetes API schemas accept, pinned, sized, unprivileged, and referring to what exists', () => {
    const problems: string[] = [];
    for (const dir of roots) {
      const external = kustomizationOf(dir).namespace ? [] : EXTERNAL_SECRETS;
      for (const p of objectProblems(resources(dir), external)) problems.push(`${rel(dir)}: ${p}`);
    }
    expect(problems).toEqual([]);
    const kinds = new Set(resources(OVERLAY).map((o) => o.kind));
    expect([...kinds].sort()).toEqual(
      Object.keys(MODELS)
        .map((m) => m.split('/').at(-1))
        .sort(),
    );
  });

  it('configures NATS, JetStream and the collector on the ports and volumes their pods declare', () => {
    expect(configProblems(resources(OVERLAY))).toEqual([]);
  });

  it('gives the chart values whose addresses reach the overlay’s Services (NATS, PostgreSQL, OTLP, Temporal)', () => {
    const documented = documentedValues();
    expect(documented.length).toBeGreaterThan(0);
    for (const { namespace, file } of documented) {
      expect(existsSync(file)).toBe(true);
      expect(valuesProblems(resources(dirname(file)), file, namespace)).toEqual([]);
    }
  });

  it('lowers, in the dev overlay, the resources it patches', () => {
    expect(kustomizationOf(OVERLAY).patches?.length).toBeGreaterThan(0);
    expect(lowerResourcesProblems(OVERLAY)).toEqual([]);
  });
});

describe('k8s/ as kubectl kustomize builds it', () => {
  const build = (dir: string) => {
    const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`kubectl kustomize ${rel(dir)}: ${result.stderr.trim()}`);
    return documents(result.stdout, rel(dir)) as Manifest[];
  };
  // Not every machine has kubectl (ours have the Google Cloud CLI's; Debian's kubernetes-client is too old).
  const withKubectl = KUBECTL ? it : it.skip;

  withKubectl('builds every overlay and the base into objects that pass the same checks', () => {
    for (const dir of roots) {
      const objects = build(dir);
      const namespace = kustomizationOf(dir).namespace;
      expect(objectProblems(objects, namespace ? [] : EXTERNAL_SECRETS)).toEqual([]);
      expect(configProblems(objects)).toEqual([]);
      // The same objects as the checks above read, and every namespaced one in the overlay's namespace.
      expect(objects.map(id).sort()).toEqual(resources(dir).map(id).sort());
      for (const o of objects) expect(o.metadata.namespace).toBe(o.kind === 'Namespace' ? undefined : namespace);
    }
    for (const { namespace, file } of documentedValues())
      expect(valuesProblems(build(dirname(file)), file, namespace)).toEqual([]);
  });

  withKubectl('applies the dev overlay’s patches', () => {
    const built = build(OVERLAY);
    for (const entry of kustomizationOf(OVERLAY).patches ?? []) {
      const patch = manifests(join(OVERLAY, entry.path!))[0]!;
      const object = find(built, patch.kind, patch.metadata.name)!;
      if (patch.data) expect(object.data).toMatchObject(patch.data);
      for (const c of patchedContainers(patch))
        expect(workloads([object])[0]!.pod.containers.find((x) => x.name === c.name)?.resources).toEqual(c.resources);
    }
  });
});
