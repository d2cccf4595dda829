/**
 * Just enough of the D-Bus wire protocol for plat's keychain read (see secret-service.ts): a connection to a
 * `unix:` bus address, SASL EXTERNAL authentication, method calls and their replies in little-endian messages.
 * Not a general client: no signals (the bus's own are skipped), no file descriptors, no big-endian peers (a reply
 * in big-endian order is an error, and the caller falls back to libsecret). Every failure is a DBusError or a
 * socket error; none carries message bodies, which may hold secrets.
 */
import type { Socket } from 'node:net';

/** A D-Bus value as JS sees it: strings (s, o, g), numbers (y, u, i), booleans, byte arrays (ay), arrays, structs
 *  as arrays, dict entries as [key, value] pairs, variants as [signature, value]. */
export type DBusValue = string | number | boolean | Buffer | DBusValue[];

export interface MethodCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: DBusValue[];
}

export class DBusError extends Error {
  constructor(
    message: string,
    /** The error name a peer answered with (org.freedesktop.DBus.Error.ServiceUnknown …), if any. */
    readonly errorName?: string,
  ) {
    super(message);
    this.name = 'DBusError';
  }
}

const METHOD_CALL = 1;
const METHOD_RETURN = 2;
const ERROR = 3;
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, signature: 8 } as const;
/** Far above anything plat's read exchanges: a peer sending more is not one plat should trust. */
const MAX_MESSAGE = 1024 * 1024;

/** The socket path of a session bus address (`unix:path=…` or Linux's `unix:abstract=…`); undefined for others. */
export function socketPathOf(address: string | undefined): string | undefined {
  for (const entry of (address ?? '').split(';')) {
    const match = /^unix:(.*)$/.exec(entry.trim());
    if (!match) continue;
    const keys = new Map(
      match[1]!.split(',').map((pair) => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at), unescapeValue(pair.slice(at + 1))] as const;
      }),
    );
    if (keys.has('path')) return keys.get('path');
    if (keys.has('abstract')) return `\0${keys.get('abstract')}`;
  }
  return undefined;
}

function unescapeValue(value: string): string {
  return Buffer.from(value.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

/**
 * One connection to a bus. Calls may be sent before earlier replies arrive (the bus keeps their order), so a
 * whole exchange costs one round trip per step that needs an earlier answer. `close()` ends it; an AbortSignal
 * ends it too, failing every pending call.
 */
export class DBusConnection {
  private serial = 0;
  private readonly pending = new Map<number, { resolve: (body: DBusValue[]) => void; reject: (error: Error) => void }>();
  private buffered: Buffer = Buffer.alloc(0);
  private authenticated = false;
  private failure: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new DBusError('the bus closed the connection')));
  }

  /**
   * Connects and authenticates as this process's user (EXTERNAL: the bus checks the socket's peer credentials),
   * then says Hello, as every client must first. Authentication, BEGIN and Hello go out in one write.
   */
  static async open(socketPath: string, signal: AbortSignal): Promise<DBusConnection> {
    if (typeof process.getuid !== 'function') throw new DBusError('no user id to authenticate with');
    const socket = loadNet().createConnection({ path: socketPath });
    const connection = new DBusConnection(socket);
    const abort = () => connection.fail(new DBusError('stopped waiting for the bus'));
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    socket.once('close', () => signal.removeEventListener('abort', abort));
    const uid = Buffer.from(String(process.getuid())).toString('hex');
    socket.write(`\0AUTH EXTERNAL ${uid}\r\nBEGIN\r\n`);
    void connection.call({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'Hello' }).catch(() => undefined);
    return connection;
  }

  /** Sends a method call now; the promise settles with the reply's body, or a DBusError for an error reply. */
  call(message: MethodCall): Promise<DBusValue[]> {
    if (this.failure) return Promise.reject(this.failure);
    const serial = ++this.serial;
    const reply = new Promise<DBusValue[]>((resolve, reject) => this.pending.set(serial, { resolve, reject }));
    this.socket.write(encodeCall(serial, message));
    return reply;
  }

  close(): void {
    this.fail(new DBusError('connection closed'));
  }

  /** Leaves the connection to end with the process: it no longer keeps the process alive. */
  unref(): void {
    this.socket.unref();
  }

  private fail(error: Error): void {
    if (!this.failure) this.failure = error;
    this.socket.destroy();
    for (const { reject } of this.pending.values()) reject(this.failure);
    this.pending.clear();
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    try {
      if (!this.authenticated) {
        const end = this.buffered.indexOf('\r\n');
        if (end < 0) return;
        const line = this.buffered.subarray(0, end).toString('latin1');
        if (!line.startsWith('OK ')) throw new DBusError('the bus refused to authenticate plat');
        this.authenticated = true;
        this.buffered = this.buffered.subarray(end + 2);
      }
      for (;;) {
        const length = messageLength(this.buffered);
        if (length === undefined || this.buffered.length < length) return;
        const message = this.buffered.subarray(0, length);
        this.buffered = this.buffered.subarray(length);
        this.dispatch(message);
      }
    } catch (error) {
      this.fail(error instanceof Error ? error : new DBusError(String(error)));
    }
  }

  private dispatch(message: Buffer): void {
    const { type, fields, body } = decodeMessage(message);
    if (type !== METHOD_RETURN && type !== ERROR) return; // signals (NameAcquired …): not for plat
    const serial = fields.get(FIELD.replySerial);
    const waiter = typeof serial === 'number' ? this.pending.get(serial) : undefined;
    if (!waiter) return;
    this.pending.delete(serial as number);
    if (type === ERROR) {
      const name = String(fields.get(FIELD.errorName) ?? 'unknown error');
      waiter.reject(new DBusError(`the bus answered ${name}`, name));
    } else {
      waiter.resolve(body);
    }
  }
}

/**
 * node:net, loaded with the first connection rather than with this file, so a command that reads no keychain
 * (the file store, `plat token > file`) never pays for it: ~3 ms of CPU. process.getBuiltinModule() because the
 * bundle runs from a vm.Script, where import() is unavailable, and it needs no loader of its own.
 */
function loadNet(): typeof import('node:net') {
  return process.getBuiltinModule('node:net') as typeof import('node:net');
}

/** The total length of the message at the start of `data`, once its fixed header has arrived. */
function messageLength(data: Buffer): number | undefined {
  if (data.length < 16) return undefined;
  if (data[0] !== 0x6c) throw new DBusError('the bus sent a message plat cannot read (not little-endian)');
  const bodyLength = data.readUInt32LE(4);
  const fieldsLength = data.readUInt32LE(12);
  const total = align(16 + fieldsLength, 8) + bodyLength;
  if (total > MAX_MESSAGE) throw new DBusError('the bus sent an oversized message');
  return total;
}

function decodeMessage(message: Buffer): { type: number; fields: Map<number, DBusValue>; body: DBusValue[] } {
  const reader = new Reader(message);
  reader.offset = 12;
  const fields = new Map<number, DBusValue>();
  for (const [code, variant] of reader.read('a(yv)') as Array<[number, [string, DBusValue]]>) fields.set(code, variant[1]);
  reader.align(8);
  const signature = String(fields.get(FIELD.signature) ?? '');
  const body: DBusValue[] = [];
  for (const type of splitSignature(signature)) body.push(reader.read(type));
  return { type: message[1]!, fields, body };
}

function encodeCall(serial: number, call: MethodCall): Buffer {
  const body = new Writer();
  const types = splitSignature(call.signature ?? '');
  types.forEach((type, i) => body.write(type, call.body?.[i] ?? ''));
  const fields: DBusValue[] = [
    [FIELD.path, ['o', call.path]],
    [FIELD.interface, ['s', call.interface]],
    [FIELD.member, ['s', call.member]],
    [FIELD.destination, ['s', call.destination]],
  ];
  if (types.length) fields.push([FIELD.signature, ['g', call.signature!]]);
  const head = new Writer();
  head.bytes(Buffer.from([0x6c, METHOD_CALL, 0, 1]));
  head.uint32(body.length);
  head.uint32(serial);
  head.write('a(yv)', fields);
  head.align(8);
  return Buffer.concat([head.finish(), body.finish()]);
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** The single complete types of a signature, in order: 'sa{ss}o' → ['s', 'a{ss}', 'o']. */
export function splitSignature(signature: string): string[] {
  const types: string[] = [];
  for (let at = 0; at < signature.length; ) {
    const end = endOfType(signature, at);
    types.push(signature.slice(at, end));
    at = end;
  }
  return types;
}

function endOfType(signature: string, at: number): number {
  const code = signature[at];
  if (code === 'a') return endOfType(signature, at + 1);
  if (code === '(' || code === '{') {
    const close = code === '(' ? ')' : '}';
    let i = at + 1;
    while (signature[i] !== close) {
      if (i >= signature.length) throw new DBusError(`bad signature ${signature}`);
      i = endOfType(signature, i);
    }
    return i + 1;
  }
  if (code !== undefined && 'ybuisogv'.includes(code)) return at + 1;
  throw new DBusError(`unsupported signature ${signature}`);
}

function alignmentOf(type: string): number {
  switch (type[0]) {
    case 'y':
    case 'g':
    case 'v':
      return 1;
    case '(':
    case '{':
      return 8;
    default:
      return 4; // b u i s o a
  }
}

class Writer {
  private chunks: Buffer[] = [];
  length = 0;

  bytes(data: Buffer): void {
    this.chunks.push(data);
    this.length += data.length;
  }

  align(to: number): void {
    const pad = align(this.length, to) - this.length;
    if (pad) this.bytes(Buffer.alloc(pad));
  }

  uint32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.bytes(b);
  }

  write(type: string, value: DBusValue): void {
    this.align(alignmentOf(type));
    switch (type[0]) {
      case 'y':
        return this.bytes(Buffer.from([Number(value)]));
      case 'b':
        return this.uint32(value ? 1 : 0);
      case 'u':
      case 'i':
        return this.uint32(Number(value) >>> 0);
      case 's':
      case 'o': {
        const text = Buffer.from(String(value), 'utf8');
        this.uint32(text.length);
        return this.bytes(Buffer.concat([text, Buffer.alloc(1)]));
      }
      case 'g': {
        const text = Buffer.from(String(value), 'latin1');
        return this.bytes(Buffer.concat([Buffer.from([text.length]), text, Buffer.alloc(1)]));
      }
      case 'v': {
        const [signature, inner] = value as [string, DBusValue];
        this.write('g', signature);
        return this.write(signature, inner);
      }
      case '(':
      case '{': {
        const members = splitSignature(type.slice(1, -1));
        members.forEach((member, i) => this.write(member, (value as DBusValue[])[i]!));
        return;
      }
      case 'a': {
        const element = type.slice(1);
        const lengthAt = this.chunks.length;
        this.uint32(0);
        this.align(alignmentOf(element));
        const start = this.length;
        for (const item of value as DBusValue[]) this.write(element, item);
        this.chunks[lengthAt]!.writeUInt32LE(this.length - start);
        return;
      }
    }
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

class Reader {
  offset = 0;
  constructor(private readonly data: Buffer) {}

  align(to: number): void {
    this.offset = align(this.offset, to);
  }

  private take(n: number): Buffer {
    if (this.offset + n > this.data.length) throw new DBusError('the bus sent a truncated message');
    const part = this.data.subarray(this.offset, this.offset + n);
    this.offset += n;
    return part;
  }

  read(type: string): DBusValue {
    this.align(alignmentOf(type));
    switch (type[0]) {
      case 'y':
        return this.take(1)[0]!;
      case 'b':
        return this.take(4).readUInt32LE() !== 0;
      case 'u':
        return this.take(4).readUInt32LE();
      case 'i':
        return this.take(4).readInt32LE();
      case 's':
      case 'o': {
        const length = this.take(4).readUInt32LE();
        const text = this.take(length + 1).subarray(0, length);
        return text.toString('utf8');
      }
      case 'g': {
        const length = this.take(1)[0]!;
        return this.take(length + 1).subarray(0, length).toString('latin1');
      }
      case 'v': {
        const signature = this.read('g') as string;
        if (splitSignature(signature).length !== 1) throw new DBusError('the bus sent a bad variant');
        return [signature, this.read(signature)];
      }
      case '(':
      case '{':
        return splitSignature(type.slice(1, -1)).map((member) => this.read(member));
      case 'a': {
        const length = this.take(4).readUInt32LE();
        const element = type.slice(1);
        this.align(alignmentOf(element));
        if (element === 'y') return Buffer.from(this.take(length));
        const end = this.offset + length;
        if (end > this.data.length) throw new DBusError('the bus sent a truncated message');
        const items: DBusValue[] = [];
        while (this.offset < end) items.push(this.read(element));
        return items;
      }
      default:
        throw new DBusError(`unsupported type ${type}`);
    }
  }
}
