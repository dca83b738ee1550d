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
gateway auth data webhooks compute compute-worker inbound orchestration
{{- end -}}

{{/* The apps that own a database schema, in the order their migrations run (npm start's order). */}}
{{- define "strata.migratingApps" -}}
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
{{- $names := dict "gateway" "GATEWAY_PORT" "auth" "AUTH_PORT" "data" "DATA_PORT" "compute" "COMPUTE_PORT" "compute-worker" "COMPUTE_WORKER_PORT" "orchestration" "ORCHESTRATION_PORT" "webhooks" "WEBHOOKS_PORT" "inbound" "INBOUND_PORT" -}}
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
