/**
 * The SHA-256 decision's measurement (`deno task bench --only=sha256`, issue 25 item 4): the
 * ledger's two per-row hashes, the chain's SHA-256 of each line and the HMAC-SHA256 of each line
 * without its `mac` member, done by each candidate primitive over the same ledger, as a whole
 * process: the project's WebAssembly batch (`lib/ledger/verify_rows.ts`), `node:crypto` one-shot
 * per row (the HMAC's key pads hashed once and copied per row), and `@noble/hashes`. `append` mode
 * is what one append costs in a fresh process: load the primitive, hash one row, MAC it.
 *
 * Usage: deno run --allow-read --lock=tests/deno.lock scripts/bench/sha256_paths.ts
 * (wasm|node|noble) (verify|append)
 * LEDGER KEY
 *
 * Prints the number of rows whose chain and MAC held (a check that each did the whole work).
 *
 * @module
 */
import { SCAN_SLOTS, scanRow } from "../../lib/ledger/scan.ts";

const [impl, mode, ledger, secret] = Deno.args;
const key = new TextEncoder().encode(secret);

/** A primitive: hex SHA-256 of bytes, hex HMAC of two byte ranges joined. */
interface Prim {
  sha(b: Uint8Array): string;
  mac(a: Uint8Array, b: Uint8Array): string;
}

async function load(): Promise<Prim> {
  if (impl === "node") {
    const { createHash } = await import("node:crypto");
    const k = key.length > 64 ? createHash("sha256").update(key).digest() : key;
    const pad = (x: number) => {
      const p = new Uint8Array(64).fill(x);
      for (let i = 0; i < k.length; i++) p[i] ^= k[i];
      return p;
    };
    const inner = createHash("sha256").update(pad(0x36));
    const outer = createHash("sha256").update(pad(0x5c));
    return {
      sha: (b) => createHash("sha256").update(b).digest("hex"),
      mac: (a, b) => outer.copy().update(inner.copy().update(a).update(b).digest()).digest("hex"),
    };
  }
  if (impl === "noble") {
    const { sha256 } = await import("npm:@noble/hashes@1.8.0/sha2");
    const { hmac } = await import("npm:@noble/hashes@1.8.0/hmac");
    const base = hmac.create(sha256, key);
    const hex = (d: Uint8Array) => d.toHex();
    return {
      sha: (b) => hex(sha256(b)),
      mac: (a, b) => hex(base.clone().update(a).update(b).digest()),
    };
  }
  const { HmacKey, sha256Hex } = await import("../../lib/crypto/hash.ts");
  const h = new HmacKey(key);
  return {
    sha: (b) => sha256Hex(b),
    mac: (a, b) => {
      const j = new Uint8Array(a.length + b.length);
      j.set(a);
      j.set(b, a.length);
      return h.hex(j);
    },
  };
}

const dec = new TextDecoder();
/** The ledger (its first 4 KiB for `append`: one row is all an append hashes). */
function readLedger(): Uint8Array {
  if (mode !== "append") return Deno.readFileSync(ledger);
  const f = Deno.openSync(ledger);
  const b = new Uint8Array(4096);
  const n = f.readSync(b) ?? 0;
  f.close();
  return b.subarray(0, n);
}
const bytes = readLedger();
if (impl === "wasm" && mode === "verify") {
  // The project's path as `ledger verify` runs it.
  const { checkRowsStream } = await import("../../lib/ledger/verify_rows.ts");
  let at = 0;
  const c = checkRowsStream(
    (into) => {
      const k = Math.min(into.length, bytes.length - at);
      into.set(bytes.subarray(at, at + k));
      at += k;
      return k;
    },
    key,
    { retain: false },
  );
  let ok = 0;
  for (let i = 0; i < c.n; i++) if (c.macOk[i] && c.chainOk[i]) ok++;
  console.log(ok);
} else {
  const p = await load();
  const slots = new Int32Array(SCAN_SLOTS);
  let prev = "";
  let ok = 0;
  let start = 0;
  const end = mode === "append" ? bytes.indexOf(0x0a) + 1 : bytes.length;
  for (let nl = bytes.indexOf(0x0a); nl >= 0 && nl < end; nl = bytes.indexOf(0x0a, start)) {
    if (!scanRow(bytes, start, nl, slots)) throw new Error("scan");
    const line = bytes.subarray(start, nl);
    const mac = p.mac(bytes.subarray(start, slots[0]), bytes.subarray(slots[1], nl));
    const macOk = mac === dec.decode(bytes.subarray(slots[2], slots[2] + 64));
    const pv = slots[3] === -2 ? "" : dec.decode(bytes.subarray(slots[3], slots[3] + 64));
    if (macOk && pv === prev) ok++;
    prev = p.sha(line);
    start = nl + 1;
  }
  console.log(ok);
}
