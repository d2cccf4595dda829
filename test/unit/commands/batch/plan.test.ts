// What plat batch does with a line the journal knows (src/commands/batch/plan.ts): the rule that lets failed lines
// be fixed and sent again while nothing is sent twice without an Idempotency-Key or the person's word.
import { describe, expect, it } from 'vitest';
import { planLine } from '../../../../src/commands/batch/plan.js';

const hash = 'aaaaaaaaaaaaaaaa';
const other = 'bbbbbbbbbbbbbbbb';

describe('planLine', () => {
  it('a line the journal does not know is sent', () => {
    expect(planLine(undefined, hash, undefined)).toEqual({ kind: 'send' });
  });

  it('a line done is skipped whatever its text, and said to have changed when it has', () => {
    const done = { hash, inFlight: false, ok: true, status: 201 };
    expect(planLine(done, hash, undefined)).toEqual({ kind: 'skip', changed: false });
    expect(planLine(done, other, 'resend')).toEqual({ kind: 'skip', changed: true });
  });

  it('a line that failed is sent, with its recorded key only while its text is the same', () => {
    const failed = { hash, inFlight: false, ok: false, status: 422, key: 'k1' };
    expect(planLine(failed, hash, undefined)).toEqual({ kind: 'send', key: 'k1' });
    expect(planLine(failed, other, undefined)).toEqual({ kind: 'send', key: undefined });
  });

  it('an unknown line goes again with its recorded key; otherwise, whatever its method, only on the person\'s word', () => {
    const keyed = { hash, inFlight: true, key: 'k1' };
    expect(planLine(keyed, hash, undefined)).toEqual({ kind: 'send', key: 'k1', unknown: 'keyed' });
    // Changed since: its key belongs to another request, so it is as good as no key.
    expect(planLine(keyed, other, undefined)).toEqual({ kind: 'hold' });
    const bare = { hash, inFlight: true };
    expect(planLine(bare, hash, undefined)).toEqual({ kind: 'hold' });
    expect(planLine(bare, hash, 'resend')).toEqual({ kind: 'send', unknown: 'resend' });
    expect(planLine(bare, hash, 'done')).toEqual({ kind: 'settle', as: 'done' });
    expect(planLine(bare, hash, 'failed')).toEqual({ kind: 'settle', as: 'failed' });
  });
});
