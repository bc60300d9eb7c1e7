/**
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every stored record batch.
 *
 * Node 20 has no crc32c (zlib.crc32 is the IEEE polynomial and only arrived in Node 22), so this is a
 * table-driven slice-by-8 implementation: eight 256-entry tables let the inner loop consume eight bytes
 * per iteration with eight table lookups and no per-bit work. Tables are built once at module load.
 * Vectors from RFC 3720 (iSCSI) appendix B.4 are checked in crc32c.test.ts.
 */

const poly = 0x82f63b78;

/** tables[k][b] = CRC of byte b followed by k zero bytes. */
const tables: Uint32Array[] = buildTables();

function buildTables(): Uint32Array[] {
  const t: Uint32Array[] = [];
  const t0 = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    t0[i] = c >>> 0;
  }
  t.push(t0);
  for (let k = 1; k < 8; k++) {
    const prev = t[k - 1]!;
    const cur = new Uint32Array(256);
    for (let i = 0; i < 256; i++) cur[i] = (prev[i]! >>> 8) ^ t0[prev[i]! & 0xff]!;
    t.push(cur);
  }
  return t;
}

const [T0, T1, T2, T3, T4, T5, T6, T7] = tables as [
  Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array,
];

/**
 * Continues a CRC32C over `data[start, end)`. Pass the previous result as `crc` to checksum data in
 * pieces (crc32c(b, crc32c(a)) === crc32c(a ++ b)); start with 0.
 */
export function crc32c(data: Uint8Array, crc = 0, start = 0, end = data.length): number {
  let c = ~crc >>> 0;
  let i = start;
  // Byte-at-a-time until eight bytes or fewer remain unaligned to the slice loop.
  const sliceEnd = end - ((end - i) & 7);
  for (; i < sliceEnd; i += 8) {
    const lo = (c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    c =
      T7[lo & 0xff]! ^
      T6[(lo >>> 8) & 0xff]! ^
      T5[(lo >>> 16) & 0xff]! ^
      T4[lo >>> 24]! ^
      T3[data[i + 4]!]! ^
      T2[data[i + 5]!]! ^
      T1[data[i + 6]!]! ^
      T0[data[i + 7]!]!;
  }
  for (; i < end; i++) c = T0[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Combining: the CRC of a concatenation from the CRCs of its parts, without reading the bytes again
// (arithmetic on polynomials over GF(2) modulo the CRC's polynomial, reflected as the table is).

/** a(x) * b(x) modulo the polynomial, both reflected (bit 31 is x^0). */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ poly : b >>> 1;
  }
  return p >>> 0;
}

/** x2n[k] = x^(2^k) modulo the polynomial. */
const x2n: Uint32Array = (() => {
  const t = new Uint32Array(32);
  let p = 0x40000000; // x^1
  t[0] = p;
  for (let k = 1; k < 32; k++) t[k] = p = multModP(p, p);
  return t;
})();

/** x^(n * 2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multModP(x2n[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/**
 * x^(8 * length) modulo the polynomial for the lengths combined last, one slot per low bits of the
 * length. Deriving it costs a few hundred bit steps (x2nModP), about as much as checksumming a
 * kilobyte, and the same length comes up two or three times per partition entry (knownCrc32c takes its
 * kind byte out and puts its head back in; the log record around it adds its own header), and again for
 * the next entry of the same size: a batch of 10 small events hashed over 8 partitions made about 20
 * such derivations per publish, more than the checksums they spared.
 */
const shiftSlots = 64;
const shiftLength = new Float64Array(shiftSlots).fill(-1);
const shiftOp = new Uint32Array(shiftSlots);

function shiftFor(lengthB: number): number {
  const slot = lengthB & (shiftSlots - 1);
  if (shiftLength[slot] === lengthB) return shiftOp[slot]!;
  const op = x2nModP(lengthB, 3);
  shiftLength[slot] = lengthB;
  shiftOp[slot] = op;
  return op;
}

/** The CRC32C of a ++ b, given crc32c(a), crc32c(b) and b's length in bytes. */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(shiftFor(lengthB), crcA) ^ crcB) >>> 0;
}

/**
 * The CRC32C of `b` alone, given crc32c(a ++ b), crc32c(a) and b's length (removing what a
 * contributed is the same arithmetic as adding it).
 */
export function crc32cUncombine(crcAB: number, crcA: number, lengthB: number): number {
  return crc32cCombine(crcA, crcAB, lengthB);
}
