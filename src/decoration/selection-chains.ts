// How deep a namespace's decorations select one another through the labels they set (DESIGN
// §3 chains, §10 bounds): a decoration whose labels can satisfy another's selector leads to it,
// and a pod selected by the first is rendered again with the second. The engine gives a pod
// at most `maxSelectionRounds` rounds; admission refuses a decoration that makes a chain longer,
// so that what the webhook would refuse at render time is said to the decoration's writer
// instead. An estimate from above: a label counts as leading wherever its value can satisfy
// the requirement on its key, whatever else the selector asks; decorations that lead to each
// other in a cycle count as long as they are many. Pure.
import type { PodDecoration } from "../api/poddecoration.ts";
import { keyDemands, labelsSetBy, satisfiedBy } from "./label-writes.ts";

/**
 * The longest chain of decorations (each one's labels selecting the next), as the decorations
 * in it, first to last. Decorations being deleted select nothing and lead nowhere.
 */
export function longestSelectionChain(decorations: readonly PodDecoration[]): PodDecoration[] {
  const live = decorations.filter((decoration) => decoration.metadata.deletionTimestamp == null);
  const demands = live.map((decoration) => keyDemands(decoration.spec.selector));
  // Which decorations read each key, so that an edge costs a lookup per label set.
  const readers = new Map<string, number[]>();
  demands.forEach((byKey, index) => {
    for (const key of byKey?.keys() ?? []) {
      let list = readers.get(key);
      if (list === undefined) readers.set(key, (list = []));
      list.push(index);
    }
  });
  const leadsTo: number[][] = live.map((decoration, from) => {
    const next = new Set<number>();
    for (const [key, value] of labelsSetBy(decoration)) {
      for (const to of readers.get(key) ?? []) if (to !== from && satisfiedBy(demands[to]!.get(key)!, value)) next.add(to);
    }
    return [...next];
  });
  return longestPath(leadsTo).map((index) => live[index]!);
}

/**
 * The longest path through the graph, counting nodes, where a strongly connected component
 * counts all its nodes (listed in their order given): Tarjan's components, then the longest
 * path through their DAG. Iterative, linear in nodes and edges.
 */
function longestPath(edges: readonly (readonly number[])[]): number[] {
  const count = edges.length;
  const component = new Array<number>(count).fill(-1);
  const components: number[][] = [];
  const index = new Array<number>(count).fill(-1);
  const low = new Array<number>(count).fill(0);
  const onStack = new Array<boolean>(count).fill(false);
  const stack: number[] = [];
  let counter = 0;
  for (let root = 0; root < count; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = true;
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [node, edge] = frame;
      if (edge < edges[node]!.length) {
        frame[1]++;
        const next = edges[node]![edge]!;
        if (index[next] === -1) {
          index[next] = low[next] = counter++;
          stack.push(next);
          onStack[next] = true;
          work.push([next, 0]);
        } else if (onStack[next]) {
          low[node] = Math.min(low[node]!, index[next]!);
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low[parent[0]] = Math.min(low[parent[0]]!, low[node]!);
      if (low[node] !== index[node]) continue;
      const members: number[] = [];
      for (let member = stack.pop()!; ; member = stack.pop()!) {
        onStack[member] = false;
        component[member] = components.length;
        members.push(member);
        if (member === node) break;
      }
      components.push(members.sort((a, b) => a - b));
    }
  }
  // Tarjan emits components in reverse topological order: successors first.
  const best = new Array<number>(components.length).fill(0);
  const next = new Array<number>(components.length).fill(-1);
  components.forEach((members, current) => {
    let length = 0;
    for (const member of members) {
      for (const to of edges[member]!) {
        const target = component[to]!;
        if (target !== current && best[target]! > length) {
          length = best[target]!;
          next[current] = target;
        }
      }
    }
    best[current] = length + members.length;
  });
  let start = -1;
  best.forEach((length, current) => {
    if (start === -1 || length > best[start]!) start = current;
  });
  const path: number[] = [];
  for (let current = start; current !== -1; current = next[current]!) path.push(...components[current]!);
  return path;
}
