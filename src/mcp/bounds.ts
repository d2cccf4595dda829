/**
 * How deep a JSON value plat mcp passes on as structured content. The SDK serialises each answer with
 * JSON.stringify, which recurses: a response nested 100,000 deep made the send throw and the request went
 * unanswered. Past this bound the value goes as its text with a note (call.ts).
 */
export const MAX_STRUCTURED_DEPTH = 256;

/** Whether `value` nests objects or arrays more than `limit` deep; a loop, not recursion, so any depth is safe. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
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
