import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { readCurrentProfile } from '../../../src/store/current-profile.js';
import { tempDirs } from '../../helpers/tmp.js';

const tmp = tempDirs('plat-current-');
afterEach(() => tmp.cleanup());

describe('readCurrentProfile (read at every start, before the command is known)', () => {
  it('is undefined when no profile was switched to (no file, or no config dir yet), and the name when one was', async () => {
    const dir = await tmp.make();
    expect(readCurrentProfile(dir)).toBeUndefined();
    expect(readCurrentProfile(path.join(dir, 'not-made-yet'))).toBeUndefined();
    await writeFile(path.join(dir, 'current-profile'), 'school\n');
    expect(readCurrentProfile(dir)).toBe('school');
    await writeFile(path.join(dir, 'current-profile'), '  \n');
    expect(readCurrentProfile(dir)).toBeUndefined();
  });

  it('takes something there that cannot be read as no choice (the default profile), and a bad name as a usage error naming the file', async () => {
    const dir = await tmp.make();
    await mkdir(path.join(dir, 'current-profile'));
    expect(readCurrentProfile(dir)).toBeUndefined();
    const other = await tmp.make();
    await writeFile(path.join(other, 'current-profile'), '../escape\n');
    expect(() => readCurrentProfile(other)).toThrow(UsageError);
    expect(() => readCurrentProfile(other)).toThrow(`${path.join(other, 'current-profile')} does not hold a profile name.`);
  });
});
