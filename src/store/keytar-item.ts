/**
 * The contract between plat's two keychain readers on Linux: keytar (through libsecret) writes and reads an entry,
 * and the direct read (secret-service.ts) must find exactly the item keytar would, and read its secret as keytar
 * does. Written down once here; test/in-process/store/secret-service.test.ts holds it both ways against the real
 * gnome-keyring (written by keytar and read directly, written to this contract and read by keytar).
 *
 * keytar's libsecret backend stores with secret_password_store() under a schema named
 * org.freedesktop.Secret.Generic with two string attributes, `service` and `account`; libsecret adds the schema
 * name as the `xdg:schema` attribute and, looking up, searches for all three. The secret is the password's UTF-8
 * bytes, content type text/plain.
 *
 * One daemon-side fact the contract cannot change: gnome-keyring keeps an item's schema in its file as an item
 * type, and an item stored with no schema at all is read back from that file as a Generic one. Once the daemon
 * has reloaded its file (it does when the file changed since it last read it, e.g. after a write in a later
 * second), another program's schema-less item with plat's service and account is found by keytar and by the direct
 * read alike. The two readers still agree, which is what this contract is for.
 */
export const KEYTAR_SCHEMA = 'org.freedesktop.Secret.Generic';

/** The content type libsecret gives a password it stores. */
export const KEYTAR_CONTENT_TYPE = 'text/plain';

/** The attributes keytar's entry for (service, account) carries, and the search that finds it. */
export function keytarAttributes(service: string, account: string): Array<[string, string]> {
  return [
    ['service', service],
    ['account', account],
    ['xdg:schema', KEYTAR_SCHEMA],
  ];
}

/** The password keytar reads from an item's secret bytes. */
export function decodeKeytarSecret(secret: Buffer): string {
  return secret.toString('utf8');
}

/** The secret bytes keytar stores for a password. */
export function encodeKeytarSecret(password: string): Buffer {
  return Buffer.from(password, 'utf8');
}
