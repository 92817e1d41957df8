/**
 * The digest that binds an operator file's `gate_exec` entry to the gate's argv in the brief:
 * SHA-256 (lower-case hex) of the argv as compact JSON (`[` `"a","b"` `]`, no spaces), every
 * character outside printable ASCII escaped the way Python's `json.dumps` does, so digests written
 * by the earlier tool's `--install-confined` still match.
 *
 * @example
 * ```ts
 * import { gateArgvDigest } from "./gate_argv.ts";
 * gateArgvDigest(["python3", "scripts/scan.py", "{file}"]).length; // 64
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
 * import { compactArgvJson } from "./gate_argv.ts";
 * compactArgvJson(["lake", "env", "é"]); // '["lake","env","\\u00e9"]'
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
 * import { gateArgvDigest } from "./gate_argv.ts";
 * gateArgvDigest([]); // sha256 of "[]"
 * ```
 */
export function gateArgvDigest(argv: readonly string[]): string {
  return sha256Hex(compactArgvJson(argv));
}
