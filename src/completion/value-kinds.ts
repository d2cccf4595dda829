/**
 * What the commands' definitions (each command's <command>.define.ts) tell the completion generator about their
 * options, kept apart from both so that the generator reads the program it is given and never imports the entry
 * point (which would be a cycle: the program loads the completion command, which loads the generator).
 */
import type { Argument, Option } from 'commander';

/** What a shell offers for an option's value or an argument (besides commander's own `.choices()`). */
export type ValueKind =
  /** the server's scope catalogue (cached metadata), else the spec's */
  | 'scopes'
  /** profile names in the config dir */
  | 'profiles'
  /** the API's paths from the cached /openapi.json */
  | 'paths'
  /** the API's operationIds from the cached /openapi.json */
  | 'operations'
  /** after an operationId: its parameters as --<name> flags, and their enum values (cached /openapi.json) */
  | 'operation-parameters'
  /** base URLs the profiles remember */
  | 'base-urls'
  /** HTTP methods */
  | 'methods'
  /** file names */
  | 'files'
  /** plat's own command names and the help topics (plat help's argument) */
  | 'commands'
  /** a command line of its own (plat exec -- <command> [args…]): a program, then what the shell offers for it */
  | 'command-line';

/** Read by the completion generator; set with `completes()`. */
export const valueKinds = new WeakMap<Option | Argument, ValueKind>();

export function completes<T extends Option | Argument>(target: T, kind: ValueKind): T {
  valueKinds.set(target, kind);
  return target;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** The arg parser of repeatable options (the completion generator recognises them by it). */
export const collect = (value: string, previous: string[] = []) => [...previous, value];
