/**
 * Finds a key that appears twice in one object of a JSON text. `JSON.parse` keeps the last value
 * silently, while another reader of the same artifact (a reviewer's tool, a staged-approval view)
 * may show the first: an artifact must mean one thing to every parser, so one with a repeated key
 * is refused.
 *
 * @example
 * ```ts
 * import { duplicateKey } from "./duplicate_keys.ts";
 * duplicateKey('{"path": "a", "x": {"path": 1}}'); // null: different objects
 * duplicateKey('{"path": "a", "path": "b"}'); // "path"
 * ```
 * @module
 */

/**
 * The first key repeated within one object of `text`, which must be valid JSON (parse it first),
 * or `null`. Keys are compared as decoded strings (`"a"` and `"\u0061"` are the same key).
 *
 * @example
 * ```ts
 * import { duplicateKey } from "./duplicate_keys.ts";
 * duplicateKey('[{"a": 1}, {"a": 2}]'); // null
 * duplicateKey('{"a": 1, "\\u0061": 2}'); // "a"
 * ```
 */
export function duplicateKey(text: string): string | null {
  // One entry per open container: the keys seen (an object) or null (an array); whether the next
  // string in an object is a key.
  const stack: { keys: Set<string> | null; expectKey: boolean }[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      let escaped = false;
      while (j < text.length) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) escaped = true;
        else if (d === 0x22) break;
        j++;
        if (d === 0x5c) j++;
      }
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys !== null && top.expectKey) {
        const raw = text.slice(i, j + 1);
        const key = escaped ? JSON.parse(raw) as string : raw.slice(1, -1);
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j;
    } else if (c === 0x7b) stack.push({ keys: new Set(), expectKey: true });
    else if (c === 0x5b) stack.push({ keys: null, expectKey: false });
    else if (c === 0x7d || c === 0x5d) stack.pop();
    else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys !== null) top.expectKey = true;
    }
  }
  return null;
}
