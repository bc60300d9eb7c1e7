/**
 * Reading and writing protobuf fields with protobufjs's Reader and Writer, for the stream codecs that
 * skip proto-loader's object copies (batch-wire.ts, append-wire.ts): 64-bit fields as numbers, default
 * values left out, known fields checked for their wire type, nested messages for their length.
 */
import protobuf from 'protobufjs';

export type Reader = protobuf.Reader;
export type Writer = protobuf.Writer;

// Wire types.
export const varint = 0;
export const fixed64 = 1;
export const delimited = 2;

export interface EnumDefinition {
  readonly type: { readonly value: readonly { readonly name: string; readonly number: number }[] };
}

/** An enum's names by number and numbers by name, from the schema as loaded. */
export function enumOf(def: unknown): { names: Map<number, string>; numbers: Map<string, number> } {
  const names = new Map<number, string>();
  const numbers = new Map<string, number>();
  for (const v of (def as EnumDefinition).type.value) {
    names.set(v.number, v.name);
    numbers.set(v.name, v.number);
  }
  return { names, numbers };
}

// ---------------------------------------------------------------------------------------------
// Encoding: fields at their default (zero, empty, absent) are not written (proto3 reads them the same).

/** The loose form the encoder takes: proto-loader's input types, fields optional. */
export type Loose = Record<string, unknown>;

export function writeU64(w: Writer, field: number, v: unknown): void {
  if (v === undefined || v === null || v === 0 || v === '0') return;
  w.uint32((field << 3) | varint);
  // A value below 2^32 has the same varint as a uint32, without protobufjs's LongBits object.
  if (typeof v === 'number' && v > 0 && v <= 0xffffffff && Number.isInteger(v)) w.uint32(v);
  else w.uint64(v as number);
}

export function writeU32(w: Writer, field: number, v: unknown): void {
  if (v === undefined || v === null || v === 0) return;
  w.uint32((field << 3) | varint).uint32(v as number);
}

export function writeEnum(w: Writer, field: number, v: unknown, numbers: Map<string, number>): void {
  if (v === undefined || v === null) return;
  const n = typeof v === 'number' ? v : numbers.get(v as string);
  if (n === undefined) throw new TypeError(`unknown enum value ${String(v)}`);
  if (n !== 0) w.uint32((field << 3) | varint).int32(n);
}

export function writeString(w: Writer, field: number, v: unknown): void {
  if (typeof v === 'string' && v.length > 0) w.uint32((field << 3) | delimited).string(v);
}

export function writeBytes(w: Writer, field: number, v: unknown): void {
  if (v instanceof Uint8Array && v.byteLength > 0) w.uint32((field << 3) | delimited).bytes(v);
}

// ---------------------------------------------------------------------------------------------
// Decoding

/**
 * A uint64 varint as a number: exact below 2^53; above, an inexact number that is never a safe
 * integer, so the checks after refuse it (as they refuse protobufjs's Long.toNumber of it).
 */
export function readU64(r: Reader): number {
  const buf = r.buf;
  let pos = r.pos;
  let v = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= r.len) throw new RangeError(`index out of range: ${pos} + 1 > ${r.len}`);
    const byte = buf[pos++]!;
    v += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      r.pos = pos;
      return v;
    }
    scale *= 128;
  }
  throw new Error('invalid varint encoding');
}

/** The end of a length-delimited field that starts here, checked to lie within the input. */
export function endOf(r: Reader): number {
  const n = r.uint32();
  const end = r.pos + n;
  if (end > r.len) throw new RangeError(`index out of range: ${r.pos} + ${n} > ${r.len}`);
  return end;
}

/** A nested message's last field must end where the message does, not run past it. */
export function ended(r: Reader, end: number): void {
  if (r.pos !== end) throw new RangeError(`a nested message runs ${r.pos - end} bytes past its length`);
}

export function expect(tag: number, wireType: number): void {
  if ((tag & 7) !== wireType) throw new Error(`field ${tag >>> 3}: wire type ${tag & 7}, expected ${wireType}`);
}

export function enumName(names: Map<number, string>, n: number): string | number {
  return names.get(n) ?? n;
}
