{{/*
NATS users: each service its own, allowed the subjects its code uses and no other
(docs/deployment.md, "NATS users"; docs/events.md, "Who may do what"). The one source of
the permissions: templates/nats-auth.yaml renders them as the NATS server's
`authorization` block, and deploy/test/nats-users.spec.ts runs every service against a
NATS server started with that block.
*/}}

{{/* The apps that connect to NATS (the gateway does not). */}}
{{- define "strata.natsApps" -}}
auth data webhooks compute compute-worker inbound orchestration storage
{{- end -}}

{{/* An app's NATS user name (dict "root" $ "app" "data"). */}}
{{- define "strata.natsUser" -}}
{{- printf "%s-%s" (include "strata.fullname" .root) .app -}}
{{- end -}}

{{/* Where replies to an app's requests arrive: an inbox of its own, which only its user may read. */}}
{{- define "strata.natsInbox" -}}
{{- printf "_INBOX.%s" (include "strata.natsUser" .) -}}
{{- end -}}

{{/* The Secret key of an app's NATS credential: NATS_PASSWORD_COMPUTE_WORKER (dict "app" … "kind" "PASSWORD"). */}}
{{- define "strata.natsSecretKey" -}}
{{- printf "NATS_%s_%s" .kind (.app | upper | replace "-" "_") -}}
{{- end -}}

{{/* JetStream API subjects of a stream the app makes when missing, and reshapes when it owns it. */}}
{{- define "strata.natsStream" -}}
- $JS.API.STREAM.INFO.{{ .name }}
- $JS.API.STREAM.CREATE.{{ .name }}
{{- if .owner }}
- $JS.API.STREAM.UPDATE.{{ .name }}
{{- end }}
{{- end -}}

{{/* A durable pull consumer of the app's own: made or bound, pulled from, its messages acknowledged. */}}
{{- define "strata.natsDurable" -}}
- $JS.API.CONSUMER.CREATE.{{ .stream }}.{{ .durable }}
- $JS.API.CONSUMER.CREATE.{{ .stream }}.{{ .durable }}.>
- $JS.API.CONSUMER.DURABLE.CREATE.{{ .stream }}.{{ .durable }}
- $JS.API.CONSUMER.INFO.{{ .stream }}.{{ .durable }}
- $JS.API.CONSUMER.MSG.NEXT.{{ .stream }}.{{ .durable }}
- $JS.ACK.{{ .stream }}.{{ .durable }}.>
- $JS.ACK.*.*.{{ .stream }}.{{ .durable }}.>
{{- end -}}

{{/*
The durable an app used on the whole records stream before events were routed: bound as it
is, drained, then deleted (docs/events.md, "Upgrading to routed events").
*/}}
{{- define "strata.natsLegacyDurable" -}}
- $JS.API.CONSUMER.INFO.{{ .stream }}.{{ .durable }}
- $JS.API.CONSUMER.MSG.NEXT.{{ .stream }}.{{ .durable }}
- $JS.API.CONSUMER.DELETE.{{ .stream }}.{{ .durable }}
- $JS.ACK.{{ .stream }}.{{ .durable }}.>
- $JS.ACK.*.*.{{ .stream }}.{{ .durable }}.>
{{- end -}}

{{/*
A record-event consumer's part (dict "p" prefix "consumer" name "legacy" durable): the routed
stream made when missing, its own routed durable, its interests' requests to the data
service, and the legacy durable it drains.
*/}}
{{- define "strata.natsRecordConsumer" -}}
{{- $routed := printf "%s_routed_records" .p -}}
{{- include "strata.natsStream" (dict "name" $routed) }}
{{ include "strata.natsDurable" (dict "stream" $routed "durable" (printf "%s_routed_%s" .p .consumer)) }}
{{ include "strata.natsLegacyDurable" (dict "stream" (printf "%s_records" .p) "durable" (printf "%s_%s" .p .legacy)) }}
- {{ .p }}.data.event-interests.{{ .consumer }}.add
- {{ .p }}.data.event-interests.{{ .consumer }}.replace
{{- end -}}

{{/* A key-value bucket: made when missing, read and written; with watch, followed (an ordered consumer). */}}
{{- define "strata.natsBucket" -}}
- $JS.API.STREAM.INFO.KV_{{ .bucket }}
- $JS.API.STREAM.CREATE.KV_{{ .bucket }}
- $JS.API.STREAM.MSG.GET.KV_{{ .bucket }}
- $JS.API.DIRECT.GET.KV_{{ .bucket }}.>
- $KV.{{ .bucket }}.>
{{- if .watch }}
- $JS.API.CONSUMER.CREATE.KV_{{ .bucket }}
- $JS.API.CONSUMER.CREATE.KV_{{ .bucket }}.>
- $JS.API.CONSUMER.INFO.KV_{{ .bucket }}.>
- $JS.API.CONSUMER.DELETE.KV_{{ .bucket }}.>
- $JS.FC.KV_{{ .bucket }}.>
{{- end }}
{{- end -}}

{{/*
Every app's permissions, as YAML: <app>: {publish: [...], subscribe: [...], responses: bool}.
`responses` lets the app answer requests it received (NATS's allow_responses: a publish to
the request's reply subject, once), which the services that serve request/reply need.
*/}}
{{- define "strata.natsPermissions" -}}
{{- $p := .Values.nats.prefix -}}
{{- $records := printf "%s_records" $p -}}
{{- $routed := printf "%s_routed_records" $p -}}
{{- $jobs := printf "%s_compute_jobs" $p -}}
{{- $backlog := printf "%s_compute_backlog" $p -}}
{{- $suspensions := printf "%s_compute_suspensions" $p -}}
{{- $signatures := printf "%s_compute_endpoint_signatures" $p -}}
{{- /* What every app does: JetStream's account check, the rate-limit counters every replica of every service shares, its own inbox. */ -}}
{{- $common := include "strata.natsBucket" (dict "bucket" (printf "%s_ratelimit" $p)) -}}
{{- $inbox := dict -}}
{{- range $app := splitList " " (include "strata.natsApps" .) }}
{{- $_ := set $inbox $app (printf "%s.>" (include "strata.natsInbox" (dict "root" $ "app" $app))) }}
{{- end }}
auth:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    - {{ $p }}.auth.plans.changed
    - {{ $p }}.data.usage
    - {{ $p }}.compute.usage
    - {{ $p }}.orchestration.usage
    - {{ $p }}.webhooks.usage
  subscribe:
    - {{ $inbox.auth }}
    - {{ $p }}.auth.plans.get
  responses: true
data:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    {{- include "strata.natsStream" (dict "name" $records "owner" true) | nindent 4 }}
    {{- include "strata.natsStream" (dict "name" $routed "owner" true) | nindent 4 }}
    - {{ $p }}.records.>
    - {{ $p }}.routed.>
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ $inbox.data }}
    - {{ $p }}.auth.plans.changed
    - {{ $p }}.data.usage
    - {{ $p }}.data.event-interests.*.add
    - {{ $p }}.data.event-interests.*.replace
  responses: true
webhooks:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    {{- include "strata.natsRecordConsumer" (dict "p" $p "consumer" "webhooks" "legacy" "webhooks") | nindent 4 }}
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ $inbox.webhooks }}
    - {{ $p }}.auth.plans.changed
    - {{ $p }}.webhooks.usage
  responses: true
compute:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    {{- /* Event-driven triggers' consumer runs here when COMPUTE_EVENT_CONSUMERS is api; triggers' changes register interests. */}}
    {{- include "strata.natsRecordConsumer" (dict "p" $p "consumer" "compute" "legacy" "compute_triggers") | nindent 4 }}
    {{- include "strata.natsStream" (dict "name" $jobs "owner" true) | nindent 4 }}
    {{- include "strata.natsStream" (dict "name" $backlog "owner" true) | nindent 4 }}
    - {{ $p }}.compute.jobs.>
    - {{ $p }}.compute.backlog.>
    - {{ $p }}.compute.event-runs
    - {{ $p }}.compute.endpoints
    - {{ $p }}.compute.triggers.changed
    {{- include "strata.natsBucket" (dict "bucket" $suspensions "watch" true) | nindent 4 }}
    {{- include "strata.natsBucket" (dict "bucket" $signatures) | nindent 4 }}
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ $inbox.compute }}
    - {{ $p }}.auth.plans.changed
    - {{ $p }}.compute.usage
    - {{ $p }}.compute.triggers.changed
    - {{ $p }}.compute.http-triggers.resolve
    - {{ $p }}.compute.http-triggers.describe
    - {{ $p }}.compute.http-triggers.dispatch
    - {{ $p }}.compute.http-triggers.dispatch-batch
    - {{ $p }}.compute.functions.exist
    - {{ $p }}.compute.functions.run
    - {{ $p }}.compute.runs.status
  responses: true
compute-worker:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    {{- include "strata.natsRecordConsumer" (dict "p" $p "consumer" "compute" "legacy" "compute_triggers") | nindent 4 }}
    {{- include "strata.natsStream" (dict "name" $jobs "owner" true) | nindent 4 }}
    {{- include "strata.natsStream" (dict "name" $backlog "owner" true) | nindent 4 }}
    {{- include "strata.natsDurable" (dict "stream" $jobs "durable" (printf "%s_compute_workers" $p)) | nindent 4 }}
    {{- include "strata.natsDurable" (dict "stream" $backlog "durable" (printf "%s_compute_backlog_workers" $p)) | nindent 4 }}
    - {{ $p }}.compute.jobs.>
    - {{ $p }}.compute.backlog.>
    - {{ $p }}.compute.event-runs
    - {{ $p }}.compute.endpoints
    - {{ $p }}.compute.runs.ended
    {{- include "strata.natsBucket" (dict "bucket" $suspensions "watch" true) | nindent 4 }}
    {{- include "strata.natsBucket" (dict "bucket" $signatures) | nindent 4 }}
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ index $inbox "compute-worker" }}
    - {{ $p }}.auth.plans.changed
    - {{ $p }}.compute.triggers.changed
    - {{ $p }}.compute.event-runs
    - {{ $p }}.compute.endpoints
  responses: true
inbound:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    - {{ $p }}.compute.http-triggers.resolve
    - {{ $p }}.compute.http-triggers.describe
    - {{ $p }}.compute.http-triggers.dispatch
    - {{ $p }}.compute.http-triggers.dispatch-batch
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ $inbox.inbound }}
    - {{ $p }}.compute.triggers.changed
    - {{ $p }}.auth.plans.changed
  responses: false
orchestration:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    {{- include "strata.natsRecordConsumer" (dict "p" $p "consumer" "orchestration" "legacy" "orchestration_triggers") | nindent 4 }}
    - {{ $p }}.compute.functions.exist
    - {{ $p }}.compute.functions.run
    - {{ $p }}.compute.runs.status
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ $inbox.orchestration }}
    - {{ $p }}.compute.runs.ended
    - {{ $p }}.auth.plans.changed
    - {{ $p }}.orchestration.usage
  responses: true
storage:
  publish:
    - $JS.API.INFO
    {{- $common | nindent 4 }}
    - {{ $p }}.auth.plans.get
  subscribe:
    - {{ $inbox.storage }}
    - {{ $p }}.auth.plans.changed
  responses: false
{{- end -}}

{{/* The NATS server's `authorization` block for the release's users (nats.auth.mode password or nkey). */}}
{{- define "strata.natsAuthorization" -}}
{{- $permissions := fromYaml (include "strata.natsPermissions" .) -}}
{{- $mode := .Values.nats.auth.mode -}}
# The NATS users of the Strata release {{ .Release.Name }} (nats.prefix {{ .Values.nats.prefix }}),
# rendered by its Helm chart: include this file from nats.conf. Each service may publish and
# subscribe to its own subjects only (docs/deployment.md, "NATS users").
{{- if eq $mode "password" }}
# The passwords are the NATS server's environment variables of the same names, from the
# release's Secret (NATS_PASSWORD_<APP>): the server reads $NAME from its environment.
{{- end }}
authorization {
  users = [
    {{- range $app := splitList " " (include "strata.natsApps" .) }}
    {{- $allowed := index $permissions $app }}
    {
      {{- if eq $mode "password" }}
      user: {{ include "strata.natsUser" (dict "root" $ "app" $app) | quote }}
      password: ${{ include "strata.natsSecretKey" (dict "app" $app "kind" "PASSWORD") }}
      {{- else }}
      nkey: {{ required (printf "nats.auth.nkeys.%s (the public key of its seed) is required with nats.auth.mode nkey" $app) (index $.Values.nats.auth.nkeys $app) | quote }}
      {{- end }}
      permissions: {
        publish: {
          allow: [
            {{- range $subject := $allowed.publish }}
            {{ $subject | quote }}
            {{- end }}
          ]
        }
        subscribe: {
          allow: [
            {{- range $subject := $allowed.subscribe }}
            {{ $subject | quote }}
            {{- end }}
          ]
        }
        {{- if $allowed.responses }}
        allow_responses: true
        {{- end }}
      }
    }
    {{- end }}
  ]
}
{{- end -}}
