/**
 * Python `fnmatch` semantics for gate globs, `protected_paths` and command `writes` globs (what
 * `protected_paths` covers is `lib/policy/protected_match.ts`).
 *
 * `*` matches any run of characters, `/` and newlines included (so `lean/*.lean` also matches
 * `lean/A/B.lean`); `?` matches one character; `[...]` is a set and `[!...]` its complement, with
 * `]` literal in first position, `a-z` ranges, and a `[` without a closing `]` taken literally.
 * There is no escape character: `\` is an ordinary character. Set parsing follows CPython 3.11's
 * `fnmatch.translate` exactly, including how it drops reversed ranges such as `z-a`.
 *
 * Matching here is always case-insensitive: both sides are lower-cased first, as the brief's
 * globs were in the earlier implementation. Strings are compared by code point.
 *
 * @example
 * ```ts
 * import { fnmatch } from "./fnmatch.ts";
 * fnmatch("Lean/A/X.LEAN", "lean/*.lean"); // true: `*` crosses `/`
 * ```
 * @module
 */

/** One element of a compiled glob. */
type Token =
  | { readonly t: "star" }
  | { readonly t: "any" }
  | { readonly t: "lit"; readonly cp: number }
  | { readonly t: "set"; readonly negate: boolean; readonly ranges: readonly [number, number][] }
  | { readonly t: "never" };

const HYPHEN = 0x2d;
const BANG = 0x21;
const CLOSE = 0x5d;

/**
 * Returns true when `pattern` holds a wildcard character (`*`, `?` or `[`).
 *
 * @example
 * ```ts
 * import { hasWildcard } from "./fnmatch.ts";
 * hasWildcard("src/*.ts"); // true
 * hasWildcard("docs/guide.md"); // false
 * ```
 */
export function hasWildcard(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/** Parses the set body `p[i..j)` (after `[`, before its closing `]`), as CPython does. */
function parseSet(p: readonly number[], i: number, j: number): Token {
  let chunks: number[][];
  if (!p.slice(i, j).includes(HYPHEN)) {
    chunks = [p.slice(i, j)];
  } else {
    chunks = [];
    let start = i;
    let k = p[i] === BANG ? i + 2 : i + 1;
    for (;;) {
      let found = -1;
      for (let m = k; m < j; m++) {
        if (p[m] === HYPHEN) {
          found = m;
          break;
        }
      }
      if (found < 0) break;
      chunks.push(p.slice(start, found));
      start = found + 1;
      k = found + 3;
    }
    const last = p.slice(start, j);
    if (last.length > 0) chunks.push(last);
    else chunks[chunks.length - 1].push(HYPHEN);
    for (let k2 = chunks.length - 1; k2 > 0; k2--) {
      const left = chunks[k2 - 1];
      const right = chunks[k2];
      if (left[left.length - 1] > right[0]) {
        chunks[k2 - 1] = [...left.slice(0, -1), ...right.slice(1)];
        chunks.splice(k2, 1);
      }
    }
  }
  // Flatten: chunk characters are literals; between chunks sits a range operator.
  type Cls = { lit: number } | { join: true };
  const seq: Cls[] = [];
  chunks.forEach((chunk, n) => {
    if (n > 0) seq.push({ join: true });
    for (const cp of chunk) seq.push({ lit: cp });
  });
  if (seq.length === 0) return { t: "never" };
  let negate = false;
  let items = seq;
  const first = seq[0];
  if ("lit" in first && first.lit === BANG) {
    if (seq.length === 1) return { t: "any" };
    negate = true;
    items = seq.slice(1);
  }
  // Read the body as a regular-expression set: `x-y` is a range, any other `-` a literal.
  const value = (c: Cls): number => ("lit" in c ? c.lit : HYPHEN);
  const ranges: [number, number][] = [];
  for (let n = 0; n < items.length;) {
    const lo = value(items[n]);
    const op = items[n + 1];
    if (op !== undefined && "join" in op && n + 2 < items.length) {
      const hi = value(items[n + 2]);
      if (lo <= hi) ranges.push([lo, hi]);
      n += 3;
    } else {
      ranges.push([lo, lo]);
      n += 1;
    }
  }
  return { t: "set", negate, ranges };
}

function compile(pattern: string): Token[] {
  const p = Array.from(pattern, (c) => c.codePointAt(0) as number);
  const out: Token[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i++];
    if (c === 0x2a) {
      if (out[out.length - 1]?.t !== "star") out.push({ t: "star" });
    } else if (c === 0x3f) {
      out.push({ t: "any" });
    } else if (c === 0x5b) {
      let j = i;
      if (j < p.length && p[j] === BANG) j++;
      if (j < p.length && p[j] === CLOSE) j++;
      while (j < p.length && p[j] !== CLOSE) j++;
      if (j >= p.length) {
        out.push({ t: "lit", cp: c });
      } else {
        out.push(parseSet(p, i, j));
        i = j + 1;
      }
    } else {
      out.push({ t: "lit", cp: c });
    }
  }
  return out;
}

function matchOne(tok: Token, cp: number): boolean {
  switch (tok.t) {
    case "any":
      return true;
    case "lit":
      return tok.cp === cp;
    case "set": {
      const hit = tok.ranges.some(([lo, hi]) => lo <= cp && cp <= hi);
      return tok.negate ? !hit : hit;
    }
    default:
      return false;
  }
}

const cache = new Map<string, Token[]>();

function tokens(pattern: string): Token[] {
  let toks = cache.get(pattern);
  if (toks === undefined) {
    toks = compile(pattern);
    if (cache.size > 4096) cache.clear();
    cache.set(pattern, toks);
  }
  return toks;
}

/**
 * Python's `fnmatch.fnmatchcase`: a case-sensitive whole-string match of `name` against `pattern`.
 *
 * @example
 * ```ts
 * import { fnmatchCase } from "./fnmatch.ts";
 * fnmatchCase("a/b.md", "*.md"); // true
 * fnmatchCase("A.md", "a.md"); // false
 * ```
 */
export function fnmatchCase(name: string, pattern: string): boolean {
  const toks = tokens(pattern);
  const s = Array.from(name, (c) => c.codePointAt(0) as number);
  // reach[i]: the first `k` tokens can match exactly s[0..i).
  let reach = new Array<boolean>(s.length + 1).fill(false);
  reach[0] = true;
  for (const tok of toks) {
    const next = new Array<boolean>(s.length + 1).fill(false);
    if (tok.t === "star") {
      let on = false;
      for (let i = 0; i <= s.length; i++) {
        on = on || reach[i];
        next[i] = on;
      }
    } else {
      for (let i = 0; i < s.length; i++) {
        if (reach[i] && matchOne(tok, s[i])) next[i + 1] = true;
      }
    }
    reach = next;
    if (!reach.includes(true)) return false;
  }
  return reach[s.length];
}

/**
 * Case-insensitive `fnmatch`: both sides are lower-cased, then matched as `fnmatchCase`.
 *
 * @example
 * ```ts
 * import { fnmatch } from "./fnmatch.ts";
 * fnmatch("Docs/Guide.MD", "docs/*.md"); // true
 * ```
 */
export function fnmatch(name: string, pattern: string): boolean {
  return fnmatchCase(name.toLowerCase(), pattern.toLowerCase());
}
