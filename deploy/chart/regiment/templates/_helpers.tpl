{{/* The prefix of every object's name: the release's name, followed by
"-regiment" unless it already holds "regiment"; at most 63 characters. */}}
{{- define "regiment.fullname" -}}
{{- if contains "regiment" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-regiment" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "regiment.labels" -}}
app.kubernetes.io/name: regiment
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: regiment
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "commander"). */}}
{{- define "regiment.selector" -}}
app.kubernetes.io/name: regiment
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The daemons' image: repository@digest, else repository:tag. */}}
{{- define "regiment.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The NATS URL the daemons connect to. */}}
{{- define "regiment.natsURL" -}}
{{- if .Values.nats.url -}}
{{- .Values.nats.url -}}
{{- else -}}
{{- printf "nats://%s-nats.%s.svc:4222" (include "regiment.fullname" .) .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* The config ConfigMap's name. */}}
{{- define "regiment.configName" -}}
{{- default (printf "%s-config" (include "regiment.fullname" .)) .Values.config.existingConfigMap -}}
{{- end -}}

{{/* Pod securityContext of the daemons (Pod Security "restricted"). */}}
{{- define "regiment.podSecurity" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container securityContext of every container (Pod Security "restricted"). */}}
{{- define "regiment.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The daemons' environment: the NATS token, when a Secret holds one. */}}
{{- define "regiment.env" -}}
{{- if .Values.nats.tokenSecret }}
env:
- name: REGIMENT_NATS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.tokenSecret }}
      key: token
{{- end }}
{{- end -}}

{{/* The Secret of the daemons' HTTP token, http.tokenSecret, as JSON
{"name": ..., "key": ...}: name "" for none, also for a release upgraded
with --reuse-values from a chart without the value (helm then renders with
the old chart's values only). */}}
{{- define "regiment.httpToken" -}}
{{- $s := dig "tokenSecret" dict (.Values.http | default dict) -}}
{{- dict "name" ($s.name | default "") "key" ($s.key | default "token") | toJson -}}
{{- end -}}

{{/* The daemons' arguments beside their own: logging, and the bearer
token of their HTTP port when http.tokenSecret names a Secret. */}}
{{- define "regiment.daemonArgs" -}}
- --log-level={{ .Values.logLevel }}
- --log-format={{ .Values.logFormat | default "text" }}
{{- if (include "regiment.httpToken" . | fromJson).name }}
- --http-token-file=/etc/regiment-http/token
{{- end }}
{{- end -}}

{{/* Volume mounts shared by the daemons: config, data, and the optional
NATS credentials, Prometheus files and HTTP token. */}}
{{- define "regiment.mounts" -}}
- name: config
  mountPath: /etc/regiment
  readOnly: true
- name: data
  mountPath: /data
{{- if .Values.nats.credentialsSecretPrefix }}
- name: nats-auth
  mountPath: /etc/regiment-nats
  readOnly: true
{{- end }}
{{- if or .Values.prometheus.bearerTokenSecret.name .Values.prometheus.caConfigMap.name }}
- name: prometheus
  mountPath: /etc/regiment-prometheus
  readOnly: true
{{- end }}
{{- if (include "regiment.httpToken" . | fromJson).name }}
- name: http-token
  mountPath: /etc/regiment-http
  readOnly: true
{{- end }}
{{- end -}}

{{/* Volumes shared by the daemons (without data): (dict "root" $ "role" "commander"). */}}
{{- define "regiment.volumes" -}}
{{- $v := .root.Values -}}
- name: config
  configMap:
    name: {{ include "regiment.configName" .root }}
{{- if $v.nats.credentialsSecretPrefix }}
- name: nats-auth
  secret:
    secretName: {{ printf "%s%s" $v.nats.credentialsSecretPrefix .role }}
    defaultMode: 0440
{{- end }}
{{- if or $v.prometheus.bearerTokenSecret.name $v.prometheus.caConfigMap.name }}
- name: prometheus
  projected:
    defaultMode: 0440
    sources:
    {{- with $v.prometheus.bearerTokenSecret }}{{ if .name }}
    - secret:
        name: {{ .name }}
        items:
        - key: {{ .key }}
          path: token
    {{- end }}{{ end }}
    {{- with $v.prometheus.caConfigMap }}{{ if .name }}
    - configMap:
        name: {{ .name }}
        items:
        - key: {{ .key }}
          path: ca.crt
    {{- end }}{{ end }}
{{- end }}
{{- with include "regiment.httpToken" .root | fromJson }}{{ if .name }}
- name: http-token
  secret:
    secretName: {{ .name }}
    defaultMode: 0440
    items:
    - key: {{ .key | quote }}
      path: token
{{- end }}{{ end }}
{{- end -}}

{{/* A daemon's probes on its port named http. */}}
{{- define "regiment.probes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 10
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  periodSeconds: 5
{{- end -}}
