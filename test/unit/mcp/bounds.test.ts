/**
 * plat mcp's depth bound (mcp/bounds.ts) at its edge: a value exactly MAX_STRUCTURED_DEPTH deep goes as structured
 * content, one level more as text. The CLI test sends a value 100,000 deep, far past the edge, which an off-by-one
 * in the bound (one level more let through, or one fewer) would still pass; this holds the edge itself, for each
 * kind of container and for a deep branch that is not the first.
 */
import { describe, expect, it } from 'vitest';
import { MAX_STRUCTURED_DEPTH } from '../../../src/mcp/bounds.js';
import { nestsDeeperThan } from '../../../src/requests/depth.js';

/** `levels` containers, one inside the other, arrays or objects or each in turn. */
function nested(levels: number, kind: 'array' | 'object' | 'mixed'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = kind === 'array' || (kind === 'mixed' && i % 2 === 0) ? [value] : { next: value };
  return value;
}

describe('nestsDeeperThan (plat mcp: structured content up to MAX_STRUCTURED_DEPTH deep)', () => {
  it.each(['array', 'object', 'mixed'] as const)('lets a value of %s exactly the bound deep through, and not one level more', (kind) => {
    expect(nestsDeeperThan(nested(MAX_STRUCTURED_DEPTH, kind), MAX_STRUCTURED_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_STRUCTURED_DEPTH + 1, kind), MAX_STRUCTURED_DEPTH)).toBe(true);
  });

  it('counts each container as a level and a scalar as none', () => {
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan([], 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
  });

  it('finds the deep branch wherever it is among wide siblings', () => {
    const deep = nested(MAX_STRUCTURED_DEPTH, 'object');
    expect(nestsDeeperThan({ first: 1, list: [{}, {}, deep], last: 'x' }, MAX_STRUCTURED_DEPTH)).toBe(true);
    expect(nestsDeeperThan([deep, {}, []], MAX_STRUCTURED_DEPTH + 1)).toBe(false);
  });
});
