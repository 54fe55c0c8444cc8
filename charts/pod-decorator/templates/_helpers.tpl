{{/* The chart's name, or nameOverride. */}}
{{- define "pod-decorator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The name of every object (and of the cluster-scoped ones, so one per release): the release
name when it already contains the chart's name, else "<release>-<chart>".
*/}}
{{- define "pod-decorator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "pod-decorator.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "pod-decorator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pod-decorator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "pod-decorator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "pod-decorator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "pod-decorator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "pod-decorator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the CA shared by the replicas in the selfSigned mode. */}}
{{- define "pod-decorator.caSecretName" -}}
{{- include "pod-decorator.fullname" . }}-webhook-ca
{{- end -}}

{{- define "pod-decorator.leaseName" -}}
{{- default (include "pod-decorator.fullname" .) .Values.leaderElection.leaseName -}}
{{- end -}}

{{/* The names the API server may use for the webhook Service; it verifies <svc>.<ns>.svc. */}}
{{- define "pod-decorator.webhookHosts" -}}
{{- $svc := include "pod-decorator.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | join "," -}}
{{- end -}}

{{/* The Secret holding tls.crt and tls.key, in the certManager and secret modes. */}}
{{- define "pod-decorator.certificateSecretName" -}}
{{- if eq .Values.certificates.mode "secret" -}}
{{- required "certificates.secret.name is required when certificates.mode is secret" .Values.certificates.secret.name -}}
{{- else -}}
{{- printf "%s-webhook-tls" (include "pod-decorator.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "pod-decorator.certificateName" -}}
{{- printf "%s-webhook" (include "pod-decorator.fullname" .) -}}
{{- end -}}

{{/*
What every webhook has in common, with the defaults of src/webhook/webhook-configuration.ts.
The caBundle: set here in the secret mode; injected by cert-manager, or patched in by the pods
(self-signed), in the others.
*/}}
{{- define "pod-decorator.webhookClientConfig" -}}
clientConfig:
  service:
    name: {{ include "pod-decorator.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: {{ .root.Values.service.port }}
  {{- if eq .root.Values.certificates.mode "secret" }}
  caBundle: {{ required "certificates.secret.caBundle (the CA's PEM) is required when certificates.mode is secret" .root.Values.certificates.secret.caBundle | b64enc }}
  {{- end }}
admissionReviewVersions:
  - v1
sideEffects: None
matchPolicy: Equivalent
timeoutSeconds: {{ .root.Values.webhook.timeoutSeconds }}
failurePolicy: {{ .root.Values.webhook.failurePolicy }}
{{- end -}}

{{- define "pod-decorator.kusionRules" -}}
rules:
  - apiGroups:
      - apps.kusionstack.io
    apiVersions:
      - v1alpha1
    operations:
      - CREATE
      - UPDATE
    resources:
      - {{ . }}
    scope: Namespaced
{{- end -}}

{{/*
The rule of the project's own cluster-scoped kind (DESIGN §12): pod-decorator.io's ClusterPodDecorations.
*/}}
{{- define "pod-decorator.clusterDecorationRules" -}}
rules:
  - apiGroups:
      - pod-decorator.io
    apiVersions:
      - v1alpha1
    operations:
      - CREATE
      - UPDATE
    resources:
      - clusterpoddecorations
    scope: Cluster
{{- end -}}

{{/*
Writes to a PodDecoration or CollaSet being deleted never reach the webhooks: removing a
finalizer must work while no replica answers, or deleting one would hang.
*/}}
{{- define "pod-decorator.notBeingDeleted" -}}
matchConditions:
  - name: not-being-deleted
    expression: "!has(object.metadata.deletionTimestamp)"
{{- end -}}

{{- define "pod-decorator.webhookAnnotations" -}}
{{- if eq .Values.certificates.mode "certManager" -}}
annotations:
  cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "pod-decorator.certificateName" .) }}
{{- end }}
{{- end -}}
