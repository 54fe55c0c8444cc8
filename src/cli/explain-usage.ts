// The usage lines of both forms of `explain`, apart from the commands so that the offline
// path does not load the cluster client to print them.
export const EXPLAIN_OFFLINE_USAGE = "usage: pod-decorator explain --pod FILE --decorations FILE [-o text|json]";
export const EXPLAIN_CLUSTER_USAGE = [
  "usage: pod-decorator explain (pod|poddecoration|pd|clusterpoddecoration|cpd|podtransitionrule|ptr|operationjob|opj) NAME",
  "                             [-n NAMESPACE] [--kubeconfig FILE] [--context NAME] [--webhook-configuration NAME]",
  "                             [-o text|json|yaml]",
].join("\n");
export const EXPLAIN_USAGE = `${EXPLAIN_OFFLINE_USAGE}\n${EXPLAIN_CLUSTER_USAGE}`;
