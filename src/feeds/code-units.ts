/**
 * A string's UTF-16 code units in a typed array, for scanners that read a string one character at
 * a time (the sanitizer's fast path). Pure: no I/O.
 *
 * Why: in every platform process String.prototype's methods are several times slower than in a
 * bare node process (ioredis 6 declares `class VerbatimString extends String`, and V8 answers a
 * subclass of String by turning String.prototype into a dictionary: charCodeAt 3.9x, startsWith
 * 3.3x, toLowerCase 10x; bench:strings), while an element of a typed array is read as fast as
 * ever. Copying the units (native, one call) and scanning them costs less than scanning the string
 * with charCodeAt even in a process where String.prototype is fast (a 5 MB string, CPU ms:
 * charCodeAt 11.6 without ioredis and 49.9 with it, copy and scan 7.4 and 8.6).
 */

/** Strings up to this many code units are copied into one array reused from call to call. */
const REUSED_UNITS = 1 << 16;

// The copy writes UTF-16LE bytes; a Uint16Array reads them in the machine's byte order.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * A function that gives the code units of a string: units[i] === s.charCodeAt(i) for i < n (n the
 * string's length), then a 0 at n, so that a read one past the end sees a character no scanner
 * stops on but NUL (a scanner that must tell the end from a NUL compares the index with n). Reads
 * beyond n see stale units. Each function has its own array, valid until its next call: give each
 * scanner its own.
 */
export function codeUnitsReader(): (s: string) => Uint16Array {
  const reused = new Uint16Array(REUSED_UNITS + 1);
  const reusedBytes = Buffer.from(reused.buffer);
  return (s) => {
    const n = s.length;
    let units = reused;
    let bytes = reusedBytes;
    if (n > REUSED_UNITS) {
      // A longer string gets an array of its own, so that one large document does not hold memory for good.
      units = new Uint16Array(n + 1);
      bytes = Buffer.from(units.buffer);
    }
    if (LITTLE_ENDIAN) bytes.write(s, 0, 'utf16le');
    else for (let i = 0; i < n; i++) units[i] = s.charCodeAt(i);
    units[n] = 0;
    return units;
  };
}

/** The code units of a short ASCII string known in advance (a name or prefix a scanner compares with). */
export const unitsOf = (ascii: string) => Uint16Array.from(ascii, (c) => c.charCodeAt(0));
