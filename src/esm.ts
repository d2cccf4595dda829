/**
 * import() of a package from node_modules. bin/plat.js runs the bundle through a V8 code cache (vm.Script), and
 * on Node 20 a vm.Script cannot import() without an experimental flag, so the shim lends its own import()
 * as globalThis.__platImport. Anywhere else (tests, Node with the plain require path) this is a plain import().
 */
type Importer = (specifier: string) => Promise<unknown>;

export function importPackage<T>(specifier: string): Promise<T> {
  const lent = (globalThis as { __platImport?: Importer }).__platImport;
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>;
}
