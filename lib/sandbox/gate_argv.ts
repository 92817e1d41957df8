/**
 * The digest that binds an operator file's `gate_exec` entry to the gate's argv in the brief:
 * SHA-256 (lower-case hex) of the argv as compact JSON (`[` `"a","b"` `]`, no spaces), every
 * character outside printable ASCII escaped the way Python's `json.dumps` does, so digests written
 * by the earlier tool's `--install-confined` still match.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gateArgvDigest } from "./gate_argv.ts";
 * assert.equal(gateArgvDigest(["python3", "scripts/scan.py", "{file}"]).length, 64);
 * ```
 * @module
 */

import { sha256Hex } from "../crypto/hash.ts";
import { canonicalString } from "../pycompat/canonical.ts";

/**
 * The compact, ASCII-escaped JSON text of an argv list.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compactArgvJson } from "./gate_argv.ts";
 * assert.equal(compactArgvJson(["lake", "env", "é"]), '["lake","env","\\u00e9"]');
 * ```
 */
export function compactArgvJson(argv: readonly string[]): string {
  return "[" + argv.map(canonicalString).join(",") + "]";
}

/**
 * SHA-256 hex of {@link compactArgvJson}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { gateArgvDigest } from "./gate_argv.ts";
 * import { sha256Hex } from "../crypto/hash.ts";
 * assert.equal(gateArgvDigest([]), sha256Hex("[]"));
 * ```
 */
export function gateArgvDigest(argv: readonly string[]): string {
  return sha256Hex(compactArgvJson(argv));
}
