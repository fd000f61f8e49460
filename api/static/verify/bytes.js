// Bytes as SPEC §1 writes them (hex, u32, field, ||) and Web Crypto's SHA-256, which every hash of the protocol uses.

export const enc = new TextEncoder();

/** Web Crypto, or an error that says why this page cannot verify. */
export function subtle() {
  const s = globalThis.crypto && globalThis.crypto.subtle;
  if (!s) {
    throw new Error("Web Crypto is not available here (the page must be served over HTTPS or from localhost)");
  }
  return s;
}

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error(`not a hex string: ${String(hex).slice(0, 80)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** a || b || ... */
export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** u32(n): 4 bytes, big-endian (SPEC §1). */
export function u32(n) {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`not a u32: ${n}`);
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

/** field(s) = u32(len(utf8(s))) || utf8(s) (SPEC §1). */
export function field(text) {
  const b = enc.encode(text);
  return concat([u32(b.length), b]);
}

/** SHA-256 of bytes, as 32 bytes. */
export const sha256 = async (bytes) => new Uint8Array(await subtle().digest("SHA-256", bytes));

export async function sha256Hex(bytes) {
  return bytesToHex(await sha256(bytes));
}
