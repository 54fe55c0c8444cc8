// The resource lock of leader election: a coordination.k8s.io/v1 Lease read and written
// with optimistic concurrency (every update carries the resourceVersion it was based on).
import { isNotFound } from "../../kube/errors.ts";
import type { Lease } from "../../kube/objects.ts";
import type { ResourceClient } from "../../kube/resource-client.ts";

/** client-go's LeaderElectionRecord; times are MicroTime strings. */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

export interface LockedRecord {
  record: LeaderElectionRecord;
  resourceVersion: string;
}

export interface LeaseLock {
  /** undefined when the Lease does not exist. */
  get(): Promise<LockedRecord | undefined>;
  /** Fails (AlreadyExists) when someone created it first. */
  create(record: LeaderElectionRecord): Promise<LockedRecord>;
  /** Fails (Conflict) when the Lease changed since resourceVersion. */
  update(record: LeaderElectionRecord, resourceVersion: string): Promise<LockedRecord>;
  describe(): string;
}

function recordOf(lease: Lease): LockedRecord {
  const spec = lease.spec ?? {};
  return {
    record: {
      holderIdentity: spec.holderIdentity ?? "",
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      acquireTime: spec.acquireTime ?? "",
      renewTime: spec.renewTime ?? "",
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
    resourceVersion: lease.metadata?.resourceVersion ?? "",
  };
}

function leaseOf(namespace: string, name: string, record: LeaderElectionRecord, resourceVersion?: string): Lease {
  return {
    metadata: { namespace, name, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: {
      holderIdentity: record.holderIdentity,
      leaseDurationSeconds: record.leaseDurationSeconds,
      leaseTransitions: record.leaseTransitions,
      ...(record.acquireTime === "" ? {} : { acquireTime: record.acquireTime }),
      ...(record.renewTime === "" ? {} : { renewTime: record.renewTime }),
    },
  };
}

export function kubeLeaseLock(leases: ResourceClient<Lease>, namespace: string, name: string): LeaseLock {
  return {
    async get() {
      try {
        return recordOf(await leases.get(namespace, name));
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async create(record) {
      return recordOf(await leases.create(leaseOf(namespace, name, record)));
    },
    async update(record, resourceVersion) {
      return recordOf(await leases.replace(leaseOf(namespace, name, record, resourceVersion)));
    },
    describe: () => `${namespace}/${name}`,
  };
}
