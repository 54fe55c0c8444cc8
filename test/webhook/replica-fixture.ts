// Replicas of one pod template as the API server sends them to webhooks.

/** A pod as the API server sends it to webhooks: managed fields written, the ServiceAccount plugin's token volume mounted. */
export function replica(tokenVolume: string, time = "2026-11-24T21:00:00Z", extra: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: "web-6f9c8d7b5-",
      labels: { app: "web", ...extra },
      managedFields: [{ manager: "kube-controller-manager", operation: "Update", apiVersion: "v1", time, fieldsType: "FieldsV1", fieldsV1: { "f:metadata": {} } }],
    },
    spec: {
      containers: [
        { name: "app", image: "web:1", volumeMounts: [{ name: tokenVolume, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }] },
        { name: "metrics", image: "metrics:1", volumeMounts: [{ name: tokenVolume, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }] },
      ],
      volumes: [{ name: tokenVolume, projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }] } }],
    },
  };
}
