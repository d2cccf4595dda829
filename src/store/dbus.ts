/**
 * Just enough of the D-Bus wire protocol for plat's keychain read (see secret-service.ts): a connection to a
 * `unix:` bus address, SASL EXTERNAL authentication, method calls (sent little-endian) and their replies (read in
 * either byte order). Not a general client: no signals (the bus's own are skipped unread), no file descriptors.
 * Whatever a peer sends, reading it is bounded (signatures as the specification restricts them, message size,
 * value count, nesting) and never blocks past the keychain deadline. Every failure is a DBusError or a socket
 * error; none carries message bodies, which may hold secrets. test/unit/store/dbus.test.ts plays the peers.
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

/** A DBusError for what a peer sent that plat will not read. */
function sent(what: string): DBusError {
  return new DBusError(`the bus sent ${what}`);
}

const METHOD_CALL = 1;
const METHOD_RETURN = 2;
const ERROR = 3;
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, signature: 8 } as const;
/** Far above anything plat's read exchanges: a peer sending more is not one plat should trust. */
export const MAX_MESSAGE = 1024 * 1024;
/**
 * The most values one message may decode to. Each value costs at least a byte on the wire, but a megabyte of them
 * would still be a million objects for replies that carry a handful: more is a peer plat should not trust.
 */
const MAX_VALUES = 65_536;
/** The D-Bus specification's limits: a signature is at most 255 bytes, nesting at most 32 arrays and 32 structs deep. */
const MAX_SIGNATURE = 255;
const MAX_DEPTH = 32;
/** What a peer may send before authentication ends: the bus's one-line answer. */
const MAX_AUTH_LINE = 16 * 1024;

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
    if (this.failure) return;
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    try {
      if (!this.authenticated) {
        const end = this.buffered.indexOf('\r\n');
        if (end < 0) {
          if (this.buffered.length > MAX_AUTH_LINE) throw sent('no answer plat can read to its authentication');
          return;
        }
        const line = this.buffered.subarray(0, end).toString('latin1');
        if (!line.startsWith('OK ')) throw new DBusError('the bus refused to authenticate plat');
        this.authenticated = true;
        this.buffered = this.buffered.subarray(end + 2);
      }
      // A chunk may end inside a message or hold several: take each complete one, keep the rest for the next chunk.
      while (!this.failure) {
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

  /** A signal (NameAcquired …) is skipped by its type byte, unread; a reply's body is decoded only if awaited. */
  private dispatch(message: Buffer): void {
    if (message[1] !== METHOD_RETURN && message[1] !== ERROR) return;
    const header = decodeHeader(message);
    const serial = header.replySerial;
    const waiter = typeof serial === 'number' ? this.pending.get(serial) : undefined;
    if (!waiter) return;
    this.pending.delete(serial as number);
    if (header.type === ERROR) {
      const name = errorNameOf(header.errorName);
      waiter.reject(new DBusError(`the bus answered ${name}`, name));
      return;
    }
    try {
      waiter.resolve(decodeBody(message, header));
    } catch (error) {
      // A reply plat cannot read fails its call; the stream itself is still in step (the length was sound).
      waiter.reject(error instanceof Error ? error : new DBusError(String(error)));
    }
  }
}

/** An error name as D-Bus allows it (dotted words, at most 255 bytes); anything else is not repeated. */
function errorNameOf(value: DBusValue | undefined): string {
  return typeof value === 'string' && value.length <= 255 && /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(value) ? value : 'an unnamed error';
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
  const littleEndian = endiannessOf(data);
  if (data[3] !== 1) throw sent('a message of a protocol version plat does not speak');
  const bodyLength = uint32At(data, 4, littleEndian);
  const fieldsLength = uint32At(data, 12, littleEndian);
  const total = align(16 + fieldsLength, 8) + bodyLength;
  if (total > MAX_MESSAGE) throw sent('an oversized message');
  return total;
}

function endiannessOf(data: Buffer): boolean {
  if (data[0] === 0x6c) return true; // 'l'
  if (data[0] === 0x42) return false; // 'B'
  throw sent('a message plat cannot read (no byte order)');
}

/** The fixed header and the three fields plat reads a reply by; the others are checked and passed over. */
interface MessageHeader {
  type: number;
  littleEndian: boolean;
  replySerial?: DBusValue;
  errorName?: DBusValue;
  signature?: DBusValue;
  /** Where the body starts. */
  bodyAt: number;
}

/**
 * The fixed header and the header fields of one whole message (as messageLength measured it).
 * @public test/unit/store/dbus.test.ts decodes frames with it, from a bundle of this file (a child process it can time out).
 */
export function decodeHeader(message: Buffer): MessageHeader {
  if (message.length < 16) throw sent('a truncated message');
  const littleEndian = endiannessOf(message);
  const fieldsLength = uint32At(message, 12, littleEndian);
  const bodyAt = align(16 + fieldsLength, 8);
  if (bodyAt > message.length) throw sent('a truncated message');
  // The fields are read up to their own end: a length inside them cannot reach into the body.
  const reader = new Reader(message, littleEndian, 16 + fieldsLength);
  reader.offset = 12;
  const header: MessageHeader = { type: message[1]!, littleEndian, bodyAt };
  reader.headerFields(header);
  return header;
}

/**
 * The body of a message whose header decodeHeader read, as the values its signature names.
 * @public test/unit/store/dbus.test.ts decodes frames with it, as with decodeHeader.
 */
export function decodeBody(message: Buffer, header: MessageHeader): DBusValue[] {
  const signature = header.signature ?? '';
  if (typeof signature !== 'string') throw sent('a malformed message');
  const reader = new Reader(message, header.littleEndian);
  reader.offset = header.bodyAt;
  const body: DBusValue[] = [];
  const types = splitSignature(signature);
  for (let i = 0; i < types.length; i++) body.push(reader.read(types[i]!));
  if (reader.offset !== message.length) throw sent('a malformed message (its body is longer than its values)');
  return body;
}

export interface OutgoingMessage {
  type: number;
  serial: number;
  fields: Array<[number, [string, DBusValue]]>;
  signature?: string;
  body?: DBusValue[];
  /** Big-endian ('B') instead of plat's own little-endian ('l'): for tests of peers that send it. */
  bigEndian?: boolean;
}

/**
 * One whole message, written into one buffer: the header with its body's length left to fill in, then the body,
 * which starts 8-aligned, so aligning its values to the message's start aligns them to the body's as D-Bus asks.
 * plat itself sends only method calls (encodeCall), always little-endian.
 */
export function encodeMessage(message: OutgoingMessage): Buffer {
  const out = new Writer(!message.bigEndian);
  out.messageStart(message.type, message.serial);
  // Indexed: a for-of with destructuring, never optimised here, makes an object per step.
  for (let i = 0; i < message.fields.length; i++) {
    const field = message.fields[i]!;
    out.headerField(field[0], field[1][0], field[1][1]);
  }
  return out.messageEnd(message.signature, message.body);
}

/** A method call, laid out as encodeMessage lays out the same fields, without building them as arrays first. */
function encodeCall(serial: number, call: MethodCall): Buffer {
  const out = new Writer(true);
  out.messageStart(METHOD_CALL, serial);
  out.headerField(FIELD.path, 'o', call.path);
  out.headerField(FIELD.interface, 's', call.interface);
  out.headerField(FIELD.member, 's', call.member);
  out.headerField(FIELD.destination, 's', call.destination);
  return out.messageEnd(call.signature, call.body);
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/**
 * The single complete types of a signature, in order: 'sa{ss}o' → ['s', 'a{ss}', 'o']. Throws a DBusError for a
 * signature D-Bus forbids, which a decoder must never try to follow: an empty struct `()` (an array of them would
 * hold endless elements of no bytes), a dict entry outside an array or with other than a basic key and one value,
 * nesting deeper than the specification's 32, more than 255 bytes, and the types plat does not read (h, x, t, n,
 * q, d: file descriptors and numbers no Secret Service reply to plat carries).
 */
export function splitSignature(signature: string): readonly string[] {
  const known = splitSignatures.get(signature);
  if (known) return known;
  if (signature.length > MAX_SIGNATURE) throw sent('a signature longer than D-Bus allows');
  const types: string[] = [];
  for (let at = 0; at < signature.length; ) {
    const end = endOfType(signature, at, 0, 0, false);
    types.push(signature.slice(at, end));
    at = end;
  }
  // The few signatures plat's exchanges use come back in every message (a(yv) and yv in each header): each is
  // checked once. Bounded, whatever signatures a peer sends.
  if (splitSignatures.size >= 64) splitSignatures.clear();
  splitSignatures.set(signature, types);
  return types;
}

const splitSignatures = new Map<string, readonly string[]>();

/**
 * A struct's or dict entry's member types ('(oayays)' → o, ay, ay, s), and an array's element type ('ao' → o):
 * looked up by the whole type, which each message repeats, instead of a new substring per value. Bounded as
 * splitSignatures is.
 */
function membersOf(type: string): readonly string[] {
  const known = structMembers.get(type);
  if (known) return known;
  const members = splitSignature(type.slice(1, -1));
  if (structMembers.size >= 64) structMembers.clear();
  structMembers.set(type, members);
  return members;
}

function elementOf(type: string): string {
  const known = arrayElements.get(type);
  if (known !== undefined) return known;
  const element = type.slice(1);
  if (arrayElements.size >= 64) arrayElements.clear();
  arrayElements.set(type, element);
  return element;
}

const structMembers = new Map<string, readonly string[]>();
const arrayElements = new Map<string, string>();

const BASIC = 'ybuisog';

/** A one-letter complete type by its character code, or undefined (V8 keeps one-letter strings: none is made). */
function oneLetterType(code: number): string | undefined {
  const letter = String.fromCharCode(code);
  return `${BASIC}v`.includes(letter) ? letter : undefined;
}

function endOfType(signature: string, at: number, arrays: number, structs: number, inArray: boolean): number {
  const code = signature[at];
  if (code === 'a') {
    if (arrays + 1 > MAX_DEPTH) throw malformedSignature(signature);
    return endOfType(signature, at + 1, arrays + 1, structs, true);
  }
  if (code === '(' || code === '{') {
    if (structs + 1 > MAX_DEPTH) throw malformedSignature(signature);
    if (code === '{' && !inArray) throw malformedSignature(signature);
    const close = code === '(' ? ')' : '}';
    let members = 0;
    let i = at + 1;
    while (signature[i] !== close) {
      if (i >= signature.length) throw malformedSignature(signature);
      const end = endOfType(signature, i, arrays, structs + 1, false);
      // A dict entry's key is one basic type: a single code.
      if (code === '{' && members === 0 && (end !== i + 1 || !BASIC.includes(signature[i]!))) throw malformedSignature(signature);
      members++;
      i = end;
    }
    if (members === 0) throw malformedSignature(signature);
    if (code === '{' && members !== 2) throw malformedSignature(signature);
    return i + 1;
  }
  if (code !== undefined && (BASIC.includes(code) || code === 'v')) return at + 1;
  throw malformedSignature(signature);
}

function malformedSignature(signature: string): DBusError {
  return sent(`a malformed signature (${signature.replace(/[^\x21-\x7e]/g, '?')})`);
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

/**
 * Writes values into one growing buffer, zero-filled so padding needs no writing. One buffer per message rather than
 * one per value: a Buffer per value made a SearchItems call 32 KiB of young allocation, this makes it ~4.
 */
/** Where a message's header fields' length is written (after the fixed header), and where the fields start. */
const FIELDS_LENGTH_AT = 12;
const FIELDS_START = 16;

class Writer {
  private buffer = Buffer.alloc(512);
  length = 0;

  constructor(private readonly littleEndian = true) {}

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const larger = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + n));
    this.buffer.copy(larger, 0, 0, this.length);
    this.buffer = larger;
  }

  byte(n: number): void {
    this.room(1);
    this.buffer[this.length++] = n;
  }

  append(data: Uint8Array): void {
    this.room(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
  }

  align(to: number): void {
    const aligned = align(this.length, to);
    this.room(aligned - this.length);
    this.length = aligned;
  }

  uint32(n: number): void {
    this.room(4);
    this.uint32At(this.length, n);
    this.length += 4;
  }

  uint32At(at: number, n: number): void {
    // Byte by byte (a Uint8Array keeps the low 8 bits of each): Buffer#writeUInt32LE checks its arguments through
    // wrappers that allocate on every call.
    const b = this.buffer;
    if (this.littleEndian) {
      b[at] = n;
      b[at + 1] = n >>> 8;
      b[at + 2] = n >>> 16;
      b[at + 3] = n >>> 24;
    } else {
      b[at] = n >>> 24;
      b[at + 1] = n >>> 16;
      b[at + 2] = n >>> 8;
      b[at + 3] = n;
    }
  }

  /** A string and its terminating zero; says how many bytes the string took. */
  private text(value: string, encoding: 'utf8' | 'latin1'): number {
    const start = this.length;
    this.room(value.length);
    // ASCII (every name, path and signature plat sends) is its character codes in either encoding, written as is.
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code > 0x7f) {
        this.length = start;
        this.append(Buffer.from(value, encoding));
        break;
      }
      this.buffer[this.length++] = code;
    }
    const length = this.length - start;
    this.byte(0);
    return length;
  }

  /** The fixed header, the body's length to come, then the header fields' a(yv), its length to come. */
  messageStart(type: number, serial: number): void {
    this.byte(this.littleEndian ? 0x6c : 0x42);
    this.byte(type);
    this.byte(0);
    this.byte(1);
    this.uint32(0);
    this.uint32(serial);
    this.uint32(0);
    this.align(8);
  }

  /** One header field, a (yv) struct: its code, then its value as a variant of `signature`. */
  headerField(code: number, signature: string, value: DBusValue): void {
    this.align(8);
    this.byte(code);
    this.write('g', signature);
    this.write(signature, value);
  }

  write(type: string, value: DBusValue): void {
    this.align(alignmentOf(type));
    switch (type[0]) {
      case 'y':
        return this.byte(Number(value));
      case 'b':
        return this.uint32(value ? 1 : 0);
      case 'u':
      case 'i':
        return this.uint32(Number(value) >>> 0);
      case 's':
      case 'o': {
        const lengthAt = this.length;
        this.uint32(0);
        this.uint32At(lengthAt, this.text(String(value), 'utf8'));
        return;
      }
      case 'g': {
        const lengthAt = this.length;
        this.byte(0);
        // The length once the text is in: writing it may move the bytes to a larger buffer.
        const length = this.text(String(value), 'latin1');
        this.buffer[lengthAt] = length;
        return;
      }
      case 'v': {
        const signature = (value as DBusValue[])[0] as string;
        this.write('g', signature);
        return this.write(signature, (value as DBusValue[])[1]!);
      }
      case '(':
      case '{': {
        const members = membersOf(type);
        for (let i = 0; i < members.length; i++) this.write(members[i]!, (value as DBusValue[])[i]!);
        return;
      }
      case 'a': {
        const element = elementOf(type);
        const lengthAt = this.length;
        this.uint32(0);
        this.align(alignmentOf(element));
        const start = this.length;
        const items = value as DBusValue[];
        for (let i = 0; i < items.length; i++) this.write(element, items[i]!);
        this.uint32At(lengthAt, this.length - start);
        return;
      }
    }
  }

  /** The body's signature as the last field, the fields' length, then the body and its length. */
  messageEnd(signature: string | undefined, body: DBusValue[] | undefined): Buffer {
    const types = splitSignature(signature ?? '');
    if (types.length) this.headerField(FIELD.signature, 'g', signature!);
    this.uint32At(FIELDS_LENGTH_AT, this.length - FIELDS_START);
    this.align(8);
    const bodyAt = this.length;
    for (let i = 0; i < types.length; i++) this.write(types[i]!, body?.[i] ?? '');
    this.uint32At(4, this.length - bodyAt);
    return this.buffer.subarray(0, this.length);
  }
}

/** An unsigned 32-bit number at `at`, read byte by byte, as Writer writes it. */
function uint32At(data: Uint8Array, at: number, littleEndian: boolean): number {
  return littleEndian
    ? (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0
    : ((data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!) >>> 0;
}

/**
 * Reads values from one message. Bounded whatever the peer sends: every read is inside the buffer, every array
 * element takes bytes (empty structs are refused by splitSignature), variants nest no deeper than the
 * specification's 64 levels, and a message decodes to at most MAX_VALUES values.
 */
class Reader {
  offset = 0;
  private values = 0;
  constructor(
    private readonly data: Buffer,
    private readonly littleEndian = true,
    /** Where reading must stop: the header's fields are read up to their own end, never into the body. */
    private readonly end = data.length,
  ) {}

  align(to: number): void {
    const aligned = align(this.offset, to);
    if (aligned > this.end) throw sent('a truncated message');
    // Padding is zero: a peer whose padding is not is not following the protocol.
    for (let at = this.offset; at < aligned; at++) {
      if (this.data[at] !== 0) throw sent('a malformed message (non-zero padding)');
    }
    this.offset = aligned;
  }

  /** Moves past the next n bytes, and says where they start. Values are read in place: no view per value. */
  private skip(n: number): number {
    const at = this.offset;
    if (at + n > this.end) throw sent('a truncated message');
    this.offset += n;
    return at;
  }

  private uint32(): number {
    return uint32At(this.data, this.skip(4), this.littleEndian);
  }

  /**
   * The header's fields (a(yv)), checked as read('a(yv)') would. The three plat reads a reply by go into `header`
   * (the last of each code wins); the others (path, sender …) are checked and passed over, no string made of them.
   */
  headerFields(header: MessageHeader): void {
    this.count();
    this.align(4);
    const end = this.arrayEnd(8);
    for (let before = -1; this.more(end, before); ) {
      before = this.offset;
      this.count();
      this.align(8);
      const code = this.read('y', 2) as number;
      const type = this.headerFieldType();
      if (code === FIELD.replySerial || code === FIELD.errorName || code === FIELD.signature) {
        const value = this.read(type, 3);
        if (code === FIELD.replySerial) header.replySerial = value;
        else if (code === FIELD.errorName) header.errorName = value;
        else header.signature = value;
      } else if (type === 's' || type === 'o' || type === 'g') {
        this.passString(type);
      } else {
        this.read(type, 3);
      }
    }
  }

  /** A header field's variant signature: one letter (as every defined field has) without a read, else read() it. */
  private headerFieldType(): string {
    const at = this.offset;
    if (at + 3 <= this.end && this.data[at] === 1 && this.data[at + 2] === 0) {
      const type = oneLetterType(this.data[at + 1]!);
      if (type !== undefined) {
        this.count();
        this.offset = at + 3;
        return type;
      }
    }
    return this.variantSignature(2);
  }

  /** Checks and moves past a string, object path or signature, as read() would, without making a string of it. */
  private passString(type: 's' | 'o' | 'g'): void {
    this.count();
    this.align(alignmentOf(type));
    const length = type === 'g' ? this.data[this.skip(1)]! : this.uint32();
    const at = this.skip(length + 1);
    if (this.data[at + length] !== 0) throw sent(`a malformed message (an unterminated ${type === 'g' ? 'signature' : 'string'})`);
  }

  private count(): void {
    if (++this.values > MAX_VALUES) throw sent('a message with too many values');
  }

  private arrayLength(): number {
    const length = this.uint32();
    if (length > MAX_MESSAGE) throw sent('an oversized array');
    return length;
  }

  /** Reads an array's length and aligns to its first element; says where its elements end. */
  private arrayEnd(alignment: number): number {
    const length = this.arrayLength();
    this.align(alignment);
    const end = this.offset + length;
    if (end > this.end) throw sent('a truncated message');
    return end;
  }

  /**
   * Whether an array ending at `end` has another element, the last one having started at `before`. An element of
   * no bytes would repeat forever (belt and braces to splitSignature's refusal of empty structs).
   */
  private more(end: number, before: number): boolean {
    if (this.offset === before) throw sent('a malformed message (an array element of no bytes)');
    if (this.offset < end) return true;
    if (this.offset !== end) throw sent('a malformed message (an array longer than its elements)');
    return false;
  }

  private variantSignature(depth: number): string {
    const signature = this.read('g', depth + 1) as string;
    if (splitSignature(signature).length !== 1) throw sent('a bad variant');
    return signature;
  }

  read(type: string, depth = 0): DBusValue {
    this.count();
    if (depth > 2 * MAX_DEPTH) throw sent('a message nested too deeply');
    this.align(alignmentOf(type));
    switch (type[0]) {
      case 'y':
        return this.data[this.skip(1)]!;
      case 'b': {
        const value = this.uint32();
        if (value > 1) throw sent('a malformed message (a boolean other than 0 or 1)');
        return value === 1;
      }
      case 'u':
        return this.uint32();
      case 'i':
        return this.uint32() | 0;
      case 's':
      case 'o': {
        const length = this.uint32();
        const at = this.skip(length + 1);
        if (this.data[at + length] !== 0) throw sent('a malformed message (an unterminated string)');
        return this.data.toString('utf8', at, at + length);
      }
      case 'g': {
        const length = this.data[this.skip(1)]!;
        const at = this.skip(length + 1);
        if (this.data[at + length] !== 0) throw sent('a malformed message (an unterminated signature)');
        return this.data.toString('latin1', at, at + length);
      }
      case 'v': {
        const signature = this.variantSignature(depth);
        return [signature, this.read(signature, depth + 1)];
      }
      case '(':
      case '{': {
        const members = membersOf(type);
        const values: DBusValue[] = [];
        for (let i = 0; i < members.length; i++) values.push(this.read(members[i]!, depth + 1));
        return values;
      }
      case 'a': {
        const element = elementOf(type);
        if (element === 'y') {
          const at = this.skip(this.arrayLength());
          return Buffer.from(this.data.subarray(at, this.offset));
        }
        const items: DBusValue[] = [];
        const end = this.arrayEnd(alignmentOf(element));
        for (let before = -1; this.more(end, before); ) {
          before = this.offset;
          items.push(this.read(element, depth + 1));
        }
        return items;
      }
      default:
        throw sent(`a value of a type plat does not read`);
    }
  }
}
