/**
 * FNV-1a 32-bit over the UTF-8 bytes of a string (docs/client-path.md: server assignment is
 * `fnv1a32(String(request_id)) % workers`, stable across runs and machines).
 */
const UTF8 = new TextEncoder();

export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  const bytes = UTF8.encode(text);
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i];
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** fnv1a32 of a non-negative integer's decimal form, without building a string (ASCII digits). */
export function fnv1a32OfId(id: number): number {
  let hash = 0x811c9dc5;
  let divisor = 1;
  while (divisor * 10 <= id) divisor *= 10;
  let rest = id;
  for (; divisor >= 1; divisor /= 10) {
    const digit = Math.floor(rest / divisor);
    rest -= digit * divisor;
    hash ^= 48 + digit;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
