// Types of readme.mjs, for the test that holds test/bench/README.md to results.json (test/ui/help-topics.test.ts).
export const BEGIN: string;
export const END: string;
export function renderResults(results: unknown): string;
export function writeBenchReadme(results?: unknown): Promise<void>;
