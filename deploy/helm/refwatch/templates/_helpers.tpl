{{/* The release's full name, at most 63 characters (a DNS label). */}}
{{- define "refwatch.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "refwatch.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "refwatch.labels" -}}
{{ include "refwatch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "refwatch.serviceAccountName" -}}
{{- default (include "refwatch.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "refwatch.tokenSecret" -}}
{{- default (printf "%s-token" (include "refwatch.fullname" .)) .Values.token.existingSecret -}}
{{- end -}}

{{/* Host names refwatch answers to besides loopback: the Service's DNS names, the Ingress hosts, allowedHosts. */}}
{{- define "refwatch.allowedHosts" -}}
{{- $svc := include "refwatch.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $hosts := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) -}}
{{- if .Values.ingress.enabled -}}
{{- range .Values.ingress.hosts -}}
{{- $hosts = append $hosts .host -}}
{{- end -}}
{{- end -}}
{{- join "," (concat $hosts .Values.allowedHosts | uniq) -}}
{{- end -}}
