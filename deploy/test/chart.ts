import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CHART = join(ROOT, 'deploy/helm/strata');

/** A rendered Kubernetes object, as the tests read it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  [key: string]: unknown;
}

/** Values every render needs (the chart refuses to render without credentials). */
export const CREDENTIALS = {
  database: { url: 'postgres://strata:db-password-123@postgres:5432/strata' },
  secrets: {
    encryptionKeys: '1:c2VjcmV0LWtleS1vZi10aGlydHktdHdvLWJ5dGVzISE=',
    // As the services require them: base64 of 32 bytes, and 8 characters at least.
    functionsPrincipalKey: 'cHJpbmNpcGFsLWtleS00NTYtb2YtMzItYnl0ZXMhISE=',
    adminEmail: 'admin@example.com',
    adminPassword: 'admin-password-789',
  },
};

/** The environment a container of a rendered pod gets: its ConfigMaps, then its own entries (secrets resolved). */
export function containerEnv(
  objects: K8sObject[],
  c: { envFrom?: { configMapRef: { name: string } }[]; env?: any[] },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) Object.assign(env, find(objects, 'ConfigMap', from.configMapRef.name).data);
  for (const entry of c.env ?? []) {
    if ('value' in entry) env[entry.name] = entry.value;
    else {
      const ref = entry.valueFrom.secretKeyRef;
      env[entry.name] = find(objects, 'Secret', ref.name).stringData![ref.key]!;
    }
  }
  return env;
}

/** deploy/render built into .toolchain/bin (again when its source is newer). */
function renderer(): string {
  const binary = join(ROOT, '.toolchain/bin/render-chart');
  const source = join(ROOT, 'deploy/render/main.go');
  if (!existsSync(binary) || statSync(binary).mtimeMs < statSync(source).mtimeMs) {
    mkdirSync(dirname(binary), { recursive: true });
    execFileSync('go', ['build', '-o', binary, '.'], {
      cwd: dirname(source),
      env: {
        ...process.env,
        GO111MODULE: 'off',
        GOPATH: '/usr/share/gocode',
        GOCACHE: join(ROOT, '.toolchain/go-cache'),
        GOFLAGS: '',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  }
  return binary;
}

/** Renders the chart with these values over values.yaml; throws with the renderer's message on an error. */
export function render(values: object, options: { apiVersions?: string[]; name?: string } = {}): K8sObject[] {
  const file = join(mkdtempSync(join(tmpdir(), 'strata-chart-')), 'values.yaml');
  writeFileSync(file, stringify(values));
  const args = ['-name', options.name ?? 'strata', '-namespace', 'platform', '-f', file];
  for (const api of options.apiVersions ?? []) args.push('-api-versions', api);
  const result = spawnSync(renderer(), [...args, CHART], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr.trim());
  return parseAllDocuments(result.stdout).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`not YAML: ${doc.errors[0]!.message}`);
    return doc.toJS({ maxAliasCount: 0 }) as K8sObject;
  });
}

/** The one object of this kind and name. */
export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`${found.length} ${kind} named ${name}`);
  return found[0]!;
}
