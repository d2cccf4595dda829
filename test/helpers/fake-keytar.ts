import type { KeytarApi } from '../../src/store/keychain.js';

/** An in-memory keytar for tests that need a working keychain but not the OS one. */
export class MemoryKeytar implements KeytarApi {
  readonly entries = new Map<string, string>();
  calls = 0;

  private key(service: string, account: string): string {
    return `${service}\u0000${account}`;
  }

  async getPassword(service: string, account: string): Promise<string | null> {
    this.calls++;
    return this.entries.get(this.key(service, account)) ?? null;
  }

  async setPassword(service: string, account: string, password: string): Promise<void> {
    this.calls++;
    this.entries.set(this.key(service, account), password);
  }

  async deletePassword(service: string, account: string): Promise<boolean> {
    this.calls++;
    return this.entries.delete(this.key(service, account));
  }

  async findCredentials(service: string): Promise<Array<{ account: string; password: string }>> {
    this.calls++;
    return [...this.entries]
      .filter(([key]) => key.startsWith(`${service}\u0000`))
      .map(([key, password]) => ({ account: key.slice(service.length + 1), password }));
  }
}

/** A keytar whose every call fails the way libsecret does without a session bus. */
export function failingKeytar(message = 'Cannot autolaunch D-Bus without X11 $DISPLAY'): KeytarApi {
  const fail = async (): Promise<never> => {
    throw new Error(message);
  };
  return { getPassword: fail, setPassword: fail, deletePassword: fail, findCredentials: fail };
}

/** A keytar whose calls never answer: a locked keychain waiting on an unlock prompt nobody sees. */
export function hangingKeytar(): KeytarApi {
  const never = (): Promise<never> => new Promise<never>(() => undefined);
  return { getPassword: never, setPassword: never, deletePassword: never, findCredentials: never };
}
