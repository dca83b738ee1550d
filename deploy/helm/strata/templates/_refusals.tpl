{{/*
Development settings a release refuses, with the reason, before anything is rendered
(docs/deployment.md, "Development settings"). The values are the ones published in the
source (libs/platform service-config.ts: DEVELOPMENT_ENCRYPTION_KEYS,
DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY, DEVELOPMENT_ADMIN_PASSWORD): everyone who read it
knows them. values.schema.json refuses the same values.
*/}}
{{- define "strata.developmentDefaults" -}}
encryptionKey: c3RyYXRhLWRldmVsb3BtZW50LWtleS0wMDAwMDAwMDA=
functionsPrincipalKey: c3RyYXRhLWRldmVsb3BtZW50LWZ1bmN0aW9ucy1rZXk=
adminPassword: strata-admin
{{- end -}}

{{/* Fails the render when a value names a development setting. */}}
{{- define "strata.refuseDevelopmentSettings" -}}
{{- $dev := fromYaml (include "strata.developmentDefaults" .) -}}
{{- $published := "is published in Strata's source: anyone who has read it holds it. Generate your own (docs/deployment.md, \"Credentials\")" -}}
{{- /* Every place a setting can be given: the credentials, the shared env, each service's env. */ -}}
{{- $places := list (dict "where" "env" "env" .Values.env) -}}
{{- range $app := splitList " " (include "strata.apps" .) }}
{{- $places = append $places (dict "where" (printf "services.%s.env" $app) "env" (index $.Values.services $app).env) }}
{{- end }}
{{- range $place := $places }}
{{- $env := $place.env | default dict }}
{{- if eq (toString (index $env "STRATA_ENV")) "development" }}
{{- fail (printf "%s.STRATA_ENV=development is refused: it makes the services accept the published development key and password. A release runs in production mode (the chart sets STRATA_ENV=production); remove it" $place.where) }}
{{- end }}
{{- if contains $dev.encryptionKey (toString (index $env "STRATA_ENCRYPTION_KEYS")) }}
{{- fail (printf "%s.STRATA_ENCRYPTION_KEYS holds the development encryption key, which %s" $place.where $published) }}
{{- end }}
{{- if eq (toString (index $env "STRATA_FUNCTIONS_PRINCIPAL_KEY")) $dev.functionsPrincipalKey }}
{{- fail (printf "%s.STRATA_FUNCTIONS_PRINCIPAL_KEY is the development key, which %s" $place.where $published) }}
{{- end }}
{{- if eq (toString (index $env "STRATA_ADMIN_PASSWORD")) $dev.adminPassword }}
{{- fail (printf "%s.STRATA_ADMIN_PASSWORD is the development password, which %s" $place.where $published) }}
{{- end }}
{{- end }}
{{- if contains $dev.encryptionKey (toString .Values.secrets.encryptionKeys) }}
{{- fail (printf "secrets.encryptionKeys holds the development encryption key, which %s" $published) }}
{{- end }}
{{- if eq (toString .Values.secrets.functionsPrincipalKey) $dev.functionsPrincipalKey }}
{{- fail (printf "secrets.functionsPrincipalKey is the development key, which %s" $published) }}
{{- end }}
{{- if eq (toString .Values.secrets.adminPassword) $dev.adminPassword }}
{{- fail (printf "secrets.adminPassword is the development password, which %s" $published) }}
{{- end }}
{{- end -}}
