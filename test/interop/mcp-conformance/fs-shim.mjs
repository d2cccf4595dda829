// node:fs with globSync (glob-shim.cjs): what hooks.mjs gives @modelcontextprotocol/conformance for 'fs' on Node 20.
import { createRequire } from 'node:module';
import fs from 'node:fs';

export * from 'node:fs';
export const globSync = createRequire(import.meta.url)('./glob-shim.cjs');
export default fs;
