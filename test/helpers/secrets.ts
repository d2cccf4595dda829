/**
 * What an agent or a script could recover from text plat handed it: JSON's escapes (`\u0041`, `\/`, `\\`) and
 * percent-encoding undone, twice over, so a test can say no spelling of a secret is in it.
 */
export function decodeEverySpelling(text: string): string {
  let out = text;
  for (let i = 0; i < 2; i++) {
    out = out.replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))).replaceAll('\\/', '/').replaceAll('\\\\', '\\');
    out = out.replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
  return out;
}
