/**
 * How deep a request's data may nest: field keys (`a[b][c]=1`), batch lines, the library's request objects and
 * plat mcp's tool arguments. Past it the input is a usage error naming where, before anything walks it: the
 * builders, the query rule, JSON.stringify and the journal's hash all recurse, and 40,000 levels overflowed the
 * stack ("Maximum call stack size exceeded", exit 1). JSON.parse itself takes any depth.
 */
export const MAX_NESTING = 100;

/** Whether `value` nests objects or arrays more than `limit` deep; a loop, not recursion, so any depth is safe. */
export function nestsDeeperThan(value: unknown, limit: number = MAX_NESTING): boolean {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/** The sentence for a value nested too deep, `what` naming it ("body", "query", "-f a[b][b]…"). */
export function tooDeep(what: string): string {
  return `${what} is nested more than ${MAX_NESTING} levels deep; plat takes at most ${MAX_NESTING}.`;
}
