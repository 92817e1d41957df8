/**
 * Counting, per dispatch, the ledger rows that spent one of its uses. Each act's row names its
 * dispatch (`"dispatch": "<12 hex>"`, written by `apply` and `run` right after the use is counted
 * in the dispatch store), so a store whose `use` rows were deleted, or put back from an older copy,
 * shows: it records fewer uses than the ledger has acts. Rows are canonical JSON, where a string
 * value can never hold `"dispatch": "` unescaped, so the byte pattern names the field itself.
 * Rows written by the earlier tool carry no such field and count nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countDispatchActs } from "./dispatch_acts.ts";
 * const row = '{"action": "apply-proposal", "dispatch": "0123456789ab", "mac": "x"}\n';
 * assert.equal(countDispatchActs(new TextEncoder().encode(row + row)).get("0123456789ab"), 2);
 * ```
 * @module
 */
import { WasmSha256 } from "../crypto/sha256_wasm.ts";

/**
 * How ledger rows name a dispatch: the first 12 hex characters of its id (the `id` of its
 * `issue-dispatch` row; the `dispatch` of each act that spent one of its uses).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dispatchTag } from "./dispatch_acts.ts";
 * assert.equal(dispatchTag("ab".repeat(32)), "abababababab");
 * ```
 */
export function dispatchTag(id: string): string {
  return id.slice(0, 12);
}

/** Longest line a streamed count looks at (a row is at most 1 MiB); a longer one is skipped. */
export const ACT_LINE_MAX = 2 * 1024 * 1024;
const TAG = 12;
/** Bytes handed to the module at a time (whole lines; a longer line goes whole). */
const PIECE = 4 << 20;
/**
 * Fewer bytes than any line that names a tag holds (the 13-byte pattern, the tag, its quote and
 * the newline; an act's start besides): a piece of n bytes names at most n / 27 tags.
 */
const MIN_TAGGED_LINE = 27;
const dec = new TextDecoder();

/** The instance that finds tags (the batch verifier's own instance is busy with its rows). */
let tagger: WasmSha256 | null = null;

/**
 * Adds the runs `act_tags` found (`runs`: pairs of words, the offset in `mem` of a run's 12-byte
 * tag and how many consecutive lines named it, in line order) to `counts`: a run of rows of one
 * dispatch costs the module a comparison a row, and this a decode a run. The batch verifier
 * counts its lines so (`checkRowsStream` with `countActs`), in the same module memory it hashes
 * them in.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { addTags } from "./dispatch_acts.ts";
 * const mem = new TextEncoder().encode("0123456789ab");
 * const counts = new Map<string, number>();
 * addTags(mem, new Uint32Array([0, 2, 0, 1]), counts);
 * assert.equal(counts.get("0123456789ab"), 3);
 * ```
 */
export function addTags(mem: Uint8Array, runs: Uint32Array, counts: Map<string, number>): void {
  for (let q = 0; q + 1 < runs.length; q += 2) {
    const tag = dec.decode(mem.subarray(runs[q], runs[q] + TAG));
    counts.set(tag, (counts.get(tag) ?? 0) + runs[q + 1]);
  }
}

/** Counts the complete lines of `piece` into `counts` in one module call. */
function countPiece(piece: Uint8Array, counts: Map<string, number>): void {
  const w = tagger ??= WasmSha256.create();
  const base = w.heapBase;
  const tagsAt = (base + piece.length + 3) & ~3;
  const most = Math.floor(piece.length / MIN_TAGGED_LINE) + 1;
  w.reserve(tagsAt - base + most * 8);
  const mem = w.bytes;
  mem.set(piece, base);
  const m = w.actTags(base, 0, piece.length, tagsAt, 0xffffffff, 0xffffffff);
  addTags(mem, new Uint32Array(mem.buffer, tagsAt, 2 * m), counts);
}

/**
 * Counts the complete lines of `bytes` (each ending in a newline) into `counts`: each act's row
 * (it begins `{"action": "apply-proposal", `, `{"action": "delete-proposal", ` or
 * `{"action": "run-request-start", `) counts once for the tag of its first `"dispatch": "<12
 * hex>"`, which in canonical JSON is the top-level field (every key before `dispatch` in an act's
 * row holds a string, a number or a list of strings). The rule is written once, in C (`act_tags`
 * in lib/crypto/wasm/sha256.c), which looks for the pattern sixteen bytes a step: in TypeScript a
 * row without the field (the earlier tool's) cost a search per quote.
 */
function countLines(bytes: Uint8Array, counts: Map<string, number>): void {
  let from = 0;
  while (from < bytes.length) {
    let end = bytes.length;
    if (bytes.length - from > PIECE) {
      end = from + bytes.subarray(from, from + PIECE).lastIndexOf(0x0a) + 1;
      if (end === from) {
        const nl = bytes.indexOf(0x0a, from + PIECE);
        end = nl < 0 ? bytes.length : nl + 1;
      }
    }
    countPiece(bytes.subarray(from, end), counts);
    from = end;
  }
}

/**
 * The acts per dispatch tag in a ledger's bytes (complete lines only: an unterminated last line
 * never counted as a row).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { countDispatchActs } from "./dispatch_acts.ts";
 * assert.equal(countDispatchActs(new Uint8Array()).size, 0);
 * ```
 */
export function countDispatchActs(bytes: Uint8Array): Map<string, number> {
  const counts = new Map<string, number>();
  countLines(bytes, counts);
  return counts;
}
