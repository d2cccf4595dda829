/**
 * The least set of scopes that lets a token call every one of some operations. Each operation's security
 * requirements are alternatives (OpenAPI: any one of them suffices), each a set of scopes that must all be held;
 * the plan picks one alternative per operation so that the union is as small as possible — a minimum set cover,
 * NP-hard in general but tiny here (a handful of operations with a few alternatives each), so it is searched
 * exactly: depth first, cheapest branches first, pruned as soon as a branch cannot beat the best union found.
 *
 * Ties are broken towards scopes the session already holds (fewer new ones to consent to), then by name, so the
 * same question always gets the same answer.
 */

export interface PlanInput {
  /** How the operation is named to the person (its operationId). */
  id: string;
  /** The security alternatives from the document; null when it does not say. */
  security: string[][] | null;
}

interface PlannedOperation {
  id: string;
  /** The alternative the plan covers this operation with; [] when it needs no scope. */
  satisfiedBy: string[];
}

export interface ScopePlan {
  /** The least set, sorted. */
  scopes: string[];
  operations: PlannedOperation[];
  /** Operations whose document states no security (nothing can be planned for them). */
  unstated: string[];
  /** Operations every alternative of which needs a credential other than an OAuth token. */
  unsatisfiable: string[];
}

/**
 * Past this much work (scopes looked at) the search gives the best union found so far; never reached by real
 * questions. Counted in work, not branches: a description's operations can list hundreds of alternatives of
 * hundreds of scopes each, and two million branches of that took hours in one synchronous loop (Ctrl-C held). The
 * first, cheapest-first descent always finishes (its work is linear in the alternatives), so there is an answer.
 */
const MAX_WORK = 2_000_000;

export function planScopes(inputs: readonly PlanInput[], held: readonly string[] = []): ScopePlan {
  const heldSet = new Set(held);
  const unstated: string[] = [];
  const unsatisfiable: string[] = [];
  const free: PlannedOperation[] = [];
  const choices: Array<{ id: string; alternatives: string[][] }> = [];
  for (const input of inputs) {
    if (input.security === null) {
      unstated.push(input.id);
      continue;
    }
    if (input.security.length === 0) {
      unsatisfiable.push(input.id);
      continue;
    }
    // An empty alternative is "no token needed"; the plan is for calling as yourself, so it counts only when the
    // operation offers nothing else.
    const scoped = dedupe(input.security.filter((alt) => alt.length > 0));
    if (scoped.length === 0) free.push({ id: input.id, satisfiedBy: [] });
    else choices.push({ id: input.id, alternatives: scoped });
  }
  // Fewest alternatives first: forced choices shrink the search before the open ones branch.
  const order = choices.map((_, i) => i).sort((a, b) => choices[a]!.alternatives.length - choices[b]!.alternatives.length);

  let best: { union: Set<string>; picks: number[] } | undefined;
  const picks: number[] = new Array(choices.length).fill(0);
  let work = 0;
  const spent = () => best !== undefined && work > MAX_WORK;
  const better = (union: Set<string>) => {
    if (!best) return true;
    if (union.size !== best.union.size) return union.size < best.union.size;
    const fresh = (s: Set<string>) => [...s].filter((x) => !heldSet.has(x)).length;
    if (fresh(union) !== fresh(best.union)) return fresh(union) < fresh(best.union);
    return [...union].sort().join(' ') < [...best.union].sort().join(' ');
  };
  const search = (depth: number, union: Set<string>) => {
    if (spent()) return;
    if (best && union.size > best.union.size) return;
    if (depth === order.length) {
      work += 4 * union.size; // comparing with the best: a few passes over the union
      if (better(union)) best = { union: new Set(union), picks: [...picks] };
      return;
    }
    const i = order[depth]!;
    const alternatives = choices[i]!.alternatives;
    // Cheapest extension first, so a good bound is found early.
    const ranked = alternatives.map((alt, k) => ({ k, cost: alt.filter((s) => !union.has(s)).length })).sort((a, b) => a.cost - b.cost);
    for (const alt of alternatives) work += alt.length + 8; // filtering each, and its share of the sort
    for (const { k } of ranked) {
      if (spent()) return;
      work += union.size + alternatives[k]!.length;
      const next = new Set(union);
      for (const s of alternatives[k]!) next.add(s);
      picks[i] = k;
      search(depth + 1, next);
    }
  };
  search(0, new Set());

  const operations: PlannedOperation[] = [
    ...choices.map((c, i) => ({ id: c.id, satisfiedBy: [...c.alternatives[best?.picks[i] ?? 0]!].sort() })),
    ...free,
  ];
  const byInput = new Map(inputs.map((input, i) => [input.id, i]));
  operations.sort((a, b) => byInput.get(a.id)! - byInput.get(b.id)!);
  return { scopes: [...(best?.union ?? [])].sort(), operations, unstated, unsatisfiable };
}

function dedupe(alternatives: string[][]): string[][] {
  const seen = new Set<string>();
  return alternatives.filter((alt) => {
    const key = [...new Set(alt)].sort().join(' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
