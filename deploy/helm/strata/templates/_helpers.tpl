{{/* The release's name prefix of every object. */}}
{{- define "strata.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The services, in the order the migrations run and the objects are written. */}}
{{- define "strata.apps" -}}
gateway auth data webhooks compute compute-worker inbound orchestration storage
{{- end -}}

{{/* The apps that own a database schema, in the order their migrations run (npm start's order). */}}
{{- define "strata.migratingApps" -}}
auth data webhooks compute inbound orchestration storage
{{- end -}}

{{/* The apps with upgrade steps (`main.js upgrade`), in the migrations' order; storage has none yet. */}}
{{- define "strata.upgradingApps" -}}
auth data webhooks compute inbound orchestration
{{- end -}}

{{- define "strata.labels" -}}
app.kubernetes.io/part-of: strata
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The name label of one app's objects: dict "root" $ "app" "data". */}}
{{- define "strata.appLabel" -}}
app.kubernetes.io/name: strata-{{ .app }}
{{- end -}}

{{/* Selector labels of one app (selectors only: the objects carry strata.labels and strata.appLabel). */}}
{{- define "strata.selectorLabels" -}}
app.kubernetes.io/name: strata-{{ .app }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* The image of an app; the sandbox workers run the compute image. */}}
{{- define "strata.image" -}}
{{- $image := ternary "compute" .app (eq .app "compute-worker") -}}
{{- printf "%s/strata-%s:%s" .root.Values.image.registry $image (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}

{{/* The in-cluster URL of an app's Service. */}}
{{- define "strata.url" -}}
{{- $svc := index .root.Values.services .app -}}
{{- printf "http://%s-%s:%v" (include "strata.fullname" .root) .app $svc.port -}}
{{- end -}}

{{/* The environment variable naming an app's HTTP port. */}}
{{- define "strata.portEnv" -}}
{{- $names := dict "gateway" "GATEWAY_PORT" "auth" "AUTH_PORT" "data" "DATA_PORT" "compute" "COMPUTE_PORT" "compute-worker" "COMPUTE_WORKER_PORT" "orchestration" "ORCHESTRATION_PORT" "webhooks" "WEBHOOKS_PORT" "inbound" "INBOUND_PORT" "storage" "STORAGE_PORT" -}}
{{- index $names .app -}}
{{- end -}}

{{/* The Secret holding the credentials: the release's own, or the one named by existingSecret. */}}
{{- define "strata.secretName" -}}
{{- default (printf "%s-secrets" (include "strata.fullname" .)) .Values.existingSecret -}}
{{- end -}}

{{/* The process an app's container runs (the worker is `main.js worker` of the compute image; isolated-vm needs --no-node-snapshot). */}}
{{- define "strata.args" -}}
{{- if eq .app "compute-worker" -}}
["--enable-source-maps", "--no-node-snapshot", "dist/main.js", "worker"]
{{- else if eq .app "compute" -}}
["--enable-source-maps", "--no-node-snapshot", "dist/main.js"]
{{- else -}}
["--enable-source-maps", "dist/main.js"]
{{- end -}}
{{- end -}}

{{/*
An environment value as text. Helm reads numbers in values files as float64, which Go
prints in exponent form from a million up (2097152 as 2.097152e+06, which no setting
accepts): a whole number is printed whole.
*/}}
{{- define "strata.envValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) -}}
{{- int64 . -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/* The settings every service reads that are not secret, as YAML `NAME: "value"` lines; values.env on top. */}}
{{- define "strata.sharedEnv" -}}
{{- $env := dict
  "STRATA_ENV" "production"
  "HOST" "0.0.0.0"
  "NATS_URL" .Values.nats.url
  "NATS_PREFIX" .Values.nats.prefix
  "AUTH_ISSUER" (printf "%s://%s/oidc" .Values.publicScheme .Values.ingress.authHost)
  "AUTH_INTERNAL_URL" (include "strata.url" (dict "root" . "app" "auth"))
  "STRATA_ENCRYPTION_ACTIVE_KEY" .Values.secrets.encryptionActiveKey
  "METRICS_PORT" .Values.metrics.port
-}}
{{- with .Values.otlpEndpoint }}{{ $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" . }}{{ end -}}
{{- with .Values.temporal.address }}
{{- $_ := set $env "TEMPORAL_ADDRESS" . }}
{{- $_ := set $env "TEMPORAL_NAMESPACE" $.Values.temporal.namespace }}
{{- $_ := set $env "TEMPORAL_TASK_QUEUE" (default (printf "%s-orchestration-runs" (include "strata.fullname" $)) $.Values.temporal.taskQueue) }}
{{- end -}}
{{- range $name, $value := merge (deepCopy .Values.env) $env }}
{{ $name }}: {{ include "strata.envValue" $value | quote }}
{{- end }}
{{- end -}}

{{/* The credentials one app reads, as env entries from `secret` (dict "root" $ "app" "auth" "secret" "<name>"). */}}
{{- define "strata.secretEnv" -}}
{{- $keys := list "DATABASE_URL" "STRATA_ENCRYPTION_KEYS" -}}
{{- if has .app (list "auth" "compute" "compute-worker" "webhooks") }}{{ $keys = append $keys "STRATA_FUNCTIONS_PRINCIPAL_KEY" }}{{ end -}}
{{- if eq .app "auth" }}{{ $keys = concat $keys (list "STRATA_ADMIN_EMAIL" "STRATA_ADMIN_PASSWORD") }}{{ end -}}
{{- range $key := $keys }}
- name: {{ $key }}
  valueFrom: { secretKeyRef: { name: {{ $.secret }}, key: {{ $key }} } }
{{- end }}
{{- end -}}

{{/* The credentials' values (chart-managed Secrets' stringData). */}}
{{- define "strata.secretData" -}}
DATABASE_URL: {{ required "database.url is required (or existingSecret)" .Values.database.url | quote }}
STRATA_ENCRYPTION_KEYS: {{ required "secrets.encryptionKeys is required (or existingSecret)" .Values.secrets.encryptionKeys | quote }}
STRATA_FUNCTIONS_PRINCIPAL_KEY: {{ required "secrets.functionsPrincipalKey is required (or existingSecret)" .Values.secrets.functionsPrincipalKey | quote }}
STRATA_ADMIN_EMAIL: {{ required "secrets.adminEmail is required (or existingSecret)" .Values.secrets.adminEmail | quote }}
STRATA_ADMIN_PASSWORD: {{ required "secrets.adminPassword is required (or existingSecret)" .Values.secrets.adminPassword | quote }}
{{- $mode := .Values.nats.auth.mode }}
{{- range $app := splitList " " (include "strata.natsApps" .) }}
{{- if eq $mode "password" }}
{{- $password := required (printf "secrets.natsPasswords.%s is required with nats.auth.mode password (or existingSecret)" $app) (index $.Values.secrets.natsPasswords $app) }}
{{- /* The NATS server reads it from its environment as a value of its configuration language: plain letters and digits parse as the string itself. */}}
{{- if not (regexMatch "^[A-Za-z][A-Za-z0-9]{15,127}$" (toString $password)) }}
{{- fail (printf "secrets.natsPasswords.%s must be 16 to 128 letters and digits, starting with a letter: the NATS server reads it from its environment as a configuration value, where other characters change or break it" $app) }}
{{- end }}
{{ include "strata.natsSecretKey" (dict "app" $app "kind" "PASSWORD") }}: {{ $password | quote }}
{{- else if eq $mode "nkey" }}
{{ include "strata.natsSecretKey" (dict "app" $app "kind" "NKEY_SEED") }}: {{ required (printf "secrets.natsNkeySeeds.%s is required with nats.auth.mode nkey (or existingSecret)" $app) (index $.Values.secrets.natsNkeySeeds $app) | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
How an app authenticates to NATS, as env entries (dict "root" $ "app" "data" "secret" "<name>"):
its user and password, or its nkey seed, from the Secret, and its own inbox. Nothing with
nats.auth.mode none, or for an app that does not connect.
*/}}
{{- define "strata.natsEnv" -}}
{{- $mode := .root.Values.nats.auth.mode -}}
{{- if and (ne $mode "none") (has .app (splitList " " (include "strata.natsApps" .root))) }}
- name: NATS_INBOX_PREFIX
  value: {{ include "strata.natsInbox" . | quote }}
{{- if eq $mode "password" }}
- name: NATS_USER
  value: {{ include "strata.natsUser" . | quote }}
- name: NATS_PASSWORD
  valueFrom: { secretKeyRef: { name: {{ .secret }}, key: {{ include "strata.natsSecretKey" (dict "app" .app "kind" "PASSWORD") }} } }
{{- else }}
- name: NATS_NKEY_SEED
  valueFrom: { secretKeyRef: { name: {{ .secret }}, key: {{ include "strata.natsSecretKey" (dict "app" .app "kind" "NKEY_SEED") }} } }
{{- end }}
{{- end }}
{{- end -}}

{{/* A worker drains for COMPUTE_WORKER_STOP_MS (45 s unless set) before it stops: its grace period is that and 15 s. */}}
{{- define "strata.workerGraceSeconds" -}}
{{- $worker := index .Values.services "compute-worker" -}}
{{- $stopMs := default (default 45000 (index .Values.env "COMPUTE_WORKER_STOP_MS")) (index $worker.env "COMPUTE_WORKER_STOP_MS") -}}
{{- add (div (add (int64 $stopMs) 999) 1000) 15 -}}
{{- end -}}
