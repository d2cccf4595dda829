/**
 * The environment for a process a test starts: the variables that are set. A test unsets one by giving it undefined
 * (`{ ...home.env, PLAT_TOKEN: undefined }`), which spawn() would pass on as the text "undefined".
 */
export function definedEnv(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
