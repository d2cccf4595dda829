/**
 * -f/-F fields as gh api builds them, through every command that takes them (call, api, op) and the query objects of
 * plat batch's lines, checked against what the platform's echo received: lists, nested objects, the query form on
 * GET, and a repeated key refused before anything is sent.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCleanError } from '../helpers/cli.js';
import { useHome, usePlatform } from '../helpers/platform.js';

const platform = usePlatform();
const home = useHome();

async function loggedIn() {
  const result = await home.login(platform, ['--scope', 'courses:read courses:write']);
  expect(result.code, result.stderr).toBe(0);
  platform.stats.reset();
}

interface Echo {
  method: string;
  query: Record<string, string | string[]>;
  body: string;
}

describe('fields as gh builds them', () => {
  it('plat api: key[]=v builds lists and key[sub]=v objects in the JSON body, -F typed and @file as before', async () => {
    await loggedIn();
    const bio = path.join(home.dir, 'bio.txt');
    await writeFile(bio, 'from a file');
    const result = await home.run([
      'api', '/api/echo',
      '-F', 'ids[]=1', '-F', 'ids[]=2',
      '-f', 'teacher[name]=Ada', '-F', 'teacher[age]=36', '-F', `teacher[bio]=@${bio}`,
      '-f', 'p[][name]=Ada', '-f', 'p[][name]=Bo',
      '-f', 'labels[]',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const echo = JSON.parse(result.stdout) as Echo;
    expect(echo.method).toBe('POST');
    expect(JSON.parse(echo.body)).toEqual({
      teacher: { name: 'Ada', age: 36, bio: 'from a file' },
      p: [{ name: 'Ada' }, { name: 'Bo' }],
      labels: [],
      ids: [1, 2],
    });
  });

  it('plat call GET: the same fields become query parameters as gh sends them (ids[]=1&ids[]=2, teacher[name]=Ada)', async () => {
    await loggedIn();
    const result = await home.run(['call', 'GET', '/api/echo', '-F', 'ids[]=1', '-F', 'ids[]=2', '-f', 'teacher[name]=Ada', '-f', 'q=algebra']);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Echo).query).toEqual({ 'ids[]': ['1', '2'], 'teacher[name]': 'Ada', q: 'algebra' });
  });

  it('plat op: fields of an operation build the same body, checked against its schema', async () => {
    await loggedIn();
    const result = await home.run(['op', 'createCourse', '-f', 'title=Algebra', '-f', 'tags[]=a', '-f', 'tags[]=b', '-f', 'teacher[name]=Ada']);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { course: unknown }).course).toMatchObject({ title: 'Algebra', tags: ['a', 'b'], teacher: { name: 'Ada' } });
  });

  it('a query key given twice repeats in the query (q=a&q=b), as curl -G -d sends it: on GET, DELETE and -X GET', async () => {
    await loggedIn();
    for (const command of [['call', 'GET', '/api/echo'], ['api', '-X', 'GET', '/api/echo'], ['call', 'DELETE', '/api/echo']]) {
      const result = await home.run([...command, '-f', 'q=a', '-f', 'q=b', '-F', 'q=3', '-f', 'teacher[name]=Ada', '-f', 'teacher[name]=Bo', '-f', 'one=1']);
      expect(result.code, result.stderr).toBe(0);
      const echo = JSON.parse(result.stdout) as Echo;
      expect(echo.query).toEqual({ q: ['a', 'b', '3'], 'teacher[name]': ['Ada', 'Bo'], one: '1' });
    }
    // a value beside a list or an object of the same name is still refused: no query form says which is meant
    const mixed = await home.run(['call', 'GET', '/api/echo', '-f', 'q[]=a', '-f', 'q=b']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('Field q is given twice');
  });

  it('a body key given twice without [] exits 2 naming it, and nothing is sent', async () => {
    await loggedIn();
    for (const command of [['api', '/api/echo'], ['call', 'POST', '/api/echo'], ['op', 'createCourse', '-f', 'title=Algebra']]) {
      const result = await home.run([...command, '-f', 'tag=a', '-f', 'tag=b']);
      expectCleanError(result);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('Field tag is given twice. For a list, give each value as tag[]=value.');
    }
    const nested = await home.run(['api', '/api/echo', '-f', 'teacher=Ada', '-f', 'teacher[name]=Ada']);
    expectCleanError(nested);
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain('Field teacher[name] needs teacher to be an object');
    expect(platform.stats.count('POST /api/echo') + platform.stats.count('GET /api/echo') + platform.stats.count('POST /api/courses')).toBe(0);
  });

  it('a key nested 40,000 deep is a usage error naming the field (no stack overflow), and nothing is sent', async () => {
    await loggedIn();
    const deep = `a${'[b]'.repeat(40_000)}`;
    for (const command of [['api', '/api/echo'], ['call', 'GET', '/api/echo']]) {
      const result = await home.run([...command, '-f', `${deep}=1`]);
      expectCleanError(result);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('-f a[b][b][b]');
      expect(result.stderr).toMatch(/is nested more than 100 levels deep; plat takes at most 100/);
      expect(result.stderr).not.toMatch(/call stack/);
      expect(result.stderr.length).toBeLessThan(1000);
    }
    // 100 levels are taken
    const fine = await home.run(['api', '/api/echo', '-f', `a${'[b]'.repeat(99)}=1`]);
    expect(fine.code, fine.stderr).toBe(0);
    expect(platform.stats.count('POST /api/echo')).toBe(1);
  });
});

describe("plat batch's query objects", () => {
  it('a list repeats its name, an object is name[member]; a value with no query form is a bad line, nothing sent', async () => {
    await loggedIn();
    const good = JSON.stringify({ id: 'q', method: 'GET', path: '/api/echo', query: { ids: [1, 2], filter: { year: 2, open: true } } });
    const result = await home.run(['batch', '-'], { stdin: `${good}\n` });
    expect(result.code, result.stderr).toBe(0);
    const line = JSON.parse(result.stdout.trim()) as { body: Echo };
    expect(line.body.query).toEqual({ ids: ['1', '2'], 'filter[year]': '2', 'filter[open]': 'true' });
    expect(platform.stats.count('GET /api/echo')).toBe(1);

    platform.stats.reset();
    const bad = JSON.stringify({ method: 'GET', path: '/api/echo', query: { filter: [{ year: 2 }] } });
    const refused = await home.run(['batch', '-'], { stdin: `${good}\n${bad}\n` });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/line 2: query "filter": an object inside a list has no query form/);
    expect(refused.stderr).not.toContain('[object Object]');
    expect(platform.stats.count('GET /api/echo')).toBe(0);
  });
});
