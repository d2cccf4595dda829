/** The reference platform's operations (operations.mjs): what /openapi.json is generated from. */
export interface OperationEntry {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  description?: string;
  /** Alternatives: each the scopes a token needs; [] = anonymous allowed. */
  security: string[][];
  parameters?: Array<{ name: string; in: 'path' | 'query' | 'header'; required?: boolean; description?: string; schema: Record<string, unknown> }>;
  body?: Record<string, unknown>;
  bodyRequired?: boolean;
}

export const OPERATIONS: OperationEntry[];
export function pathsOf(entries: OperationEntry[]): Record<string, Record<string, unknown>>;
export function createOperationHandler(api: unknown): (req: unknown, res: unknown, url: URL) => Promise<boolean>;
