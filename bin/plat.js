#!/usr/bin/env node
// The shim: cache compiled code where Node can (22.1+), load the bundle, hand its exit code to Node. Exiting by
// exitCode rather than process.exit() lets piped stdout drain completely.
import module from 'node:module';

module.enableCompileCache?.();
const { main } = await import('../dist/main.js');
process.exitCode = await main();
// Nothing should be left running; if something is (a keychain call that timed out cannot be cancelled), do not
// hang the caller's script. unref: this timer alone never keeps plat alive.
setTimeout(() => process.exit(process.exitCode), 2000).unref();
