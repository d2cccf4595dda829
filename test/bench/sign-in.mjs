// Signs the built plat in to a test platform for a benchmark, as the tests' login does: `plat login --no-browser`
// with stdin a pipe (it starts only where the address can be pasted back), the consent approved through the
// platform's own approve(), and the callback fetched. Resolves when plat login exits 0.
import { spawn } from 'node:child_process';

export function signIn(plat, platform, env, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [plat, 'login', '--no-browser', ...args], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    child.stdin.end();
    let err = '';
    let started = false;
    child.stderr.on('data', (d) => {
      err += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(err);
      if (m && !started) {
        started = true;
        platform.approve(m[1]).then((cb) => fetch(cb)).catch(reject);
      }
    });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`login failed: ${err}`))));
  });
}
