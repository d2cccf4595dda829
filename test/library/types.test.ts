/**
 * The shipped types: a TypeScript consumer of the packed package type-checks (module resolution as Node's, through
 * package.json `exports`), and misuse is a type error (@ts-expect-error fails the check if the types let it pass).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { usePackedProject } from '../helpers/package.js';

const exec = promisify(execFile);
const packed = usePackedProject();

it('a TypeScript consumer type-checks against the packed package, and misuse does not', async () => {
  await writeFile(
    path.join(packed.project().dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: false },
      files: ['consumer.ts'],
    }),
  );
  await packed.project().script(
    'consumer.ts',
    `import { createClient, AuthError, ScopeError, PlatError, type PlatClient, type TokenInfo } from 'plat-cli';

const client: PlatClient = createClient({ profile: 'work', baseUrl: 'https://school.example.com', onWarning: (m: string) => console.error(m) });
const response: Response = await client.fetch('/api/courses', { method: 'POST', body: JSON.stringify({ a: 1 }) });
const status: number = response.status;
const info: TokenInfo = await client.token({ minTtl: 600 });
const token: string = info.accessToken;
const expires: Date | null = info.expiresAt;
for await (const item of client.paginate<{ id: string }>('/api/courses')) {
  const id: string = item.id;
  void id;
}
try {
  await client.fetch(new URL('https://school.example.com/api/students'));
} catch (error) {
  if (error instanceof ScopeError || error instanceof AuthError) {
    const code: number = error.exitCode;
    const isBase: PlatError = error;
    void code, isBase;
  }
}
// client.batch() takes plat batch's lines of both kinds.
for await (const result of client.batch([{ method: 'GET', path: '/api/courses' }, { id: 'c', op: 'getCourse', params: { courseId: 'course-101' } }])) {
  const ok: boolean = result.ok;
  void ok;
}
// @ts-expect-error an op line names its operation as a string
client.batch([{ op: 42 }]);
// @ts-expect-error minTtl is a number of seconds
await client.token({ minTtl: '600' });
// @ts-expect-error there is no such option
createClient({ browser: true });
// @ts-expect-error fetch needs a path
await client.fetch();
void status, token, expires;
`,
  );
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await exec(process.execPath, [tsc, '-p', packed.project().dir]).then(
    () => ({ ok: true, out: '' }),
    (error: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
  expect(result.out).toBe('');
  expect(result.ok).toBe(true);
});
