/** The width help is written to: the terminal's, else COLUMNS, else 80; within 40 and 100. */
import { describe, expect, it } from 'vitest';
import { helpWidth } from '../../../src/help/width.js';

describe('helpWidth', () => {
  it("is a terminal's columns, whatever COLUMNS says", () => {
    expect(helpWidth({ isTTY: true, columns: 90 }, '60')).toBe(90);
  });

  it('off a terminal (or on one that does not know its size) is COLUMNS, else 80', () => {
    expect(helpWidth({ isTTY: false }, '72')).toBe(72);
    expect(helpWidth({ isTTY: true, columns: 0 }, undefined)).toBe(80);
    expect(helpWidth({}, undefined)).toBe(80);
    expect(helpWidth({}, 'wide')).toBe(80);
  });

  it('stays between 40 and 100 columns', () => {
    expect(helpWidth({ isTTY: true, columns: 20 }, undefined)).toBe(40);
    expect(helpWidth({ isTTY: true, columns: 250 }, undefined)).toBe(100);
  });
});
