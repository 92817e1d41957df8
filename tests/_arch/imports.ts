/**
 * The import-graph checker behind tests/architecture_test.ts (DESIGN.md section 4: a module imports
 * only from its own layer or below, never upward, and no cycles).
 *
 * Imports are read from the tokens of tests/_arch/tokenize.ts (which knows comments, strings,
 * template literals with nested substitutions and regular-expression literals), not by regexes
 * over the text, and not by `deno info`. `deno info --json` lists static, type-only and literal
 * dynamic imports, and is fast enough (about 1 s for the whole tree, one process per file), but it
 * silently drops a non-literal dynamic import (`import(name)`), which this checker must report,
 * expands a template with substitutions into every file its glob matches, and keeps one line per
 * specifier. It serves as the oracle instead: the tests check that this parser reads the same
 * specifiers `deno info` does (tests/_arch/imports_test.ts on fixtures, tests/architecture_test.ts
 * on the real tree).
 *
 * Everything here is pure except {@linkcode loadTree} and {@linkcode checkRepo}, the I/O edge.
 *
 * @module
 */

import { posix } from "node:path";
import { type SourceProblem, type Token, tokenize } from "./tokenize.ts";

// ---------------------------------------------------------------------------------------------
// Imports

/** One import of a module, as written. */
export interface ImportSite {
  /**
   * The specifier; `null` for a dynamic import whose argument is not a string literal (or a
   * template without substitutions).
   */
  specifier: string | null;
  /** 1-based line of the specifier (of `import` for a non-literal dynamic import). */
  line: number;
  kind: "import" | "side-effect" | "re-export" | "dynamic" | "type-query" | "import-equals";
  /** `import type`, `export type`, `typeof import(...)`, or only `type` names in the braces. */
  typeOnly: boolean;
  /** For a non-literal dynamic import: the argument's tokens, joined. */
  argument?: string;
  /**
   * The names it takes from the module, as the module exports them (`default` for a default
   * import; `import { a as b }` takes `a`); absent when it takes the whole module (a namespace
   * import, `export *`, a dynamic import, `typeof import`, `import x = require`). A side-effect
   * import takes none.
   */
  names?: string[];
}

/** Every import of one module, and what could not be read. */
export interface ParsedModule {
  imports: ImportSite[];
  problems: SourceProblem[];
}

const isPunct = (t: Token | undefined, v: string) => t?.kind === "punct" && t.value === v;
const isIdent = (t: Token | undefined, v: string) => t?.kind === "ident" && t.value === v;

/** Index of the token closing the bracket opened at `open` (`(`/`{`/`[`), or -1. */
function closing(tokens: readonly Token[], open: number): number {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  for (let k = open; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== "punct") continue;
    if (t.value in pairs) stack.push(pairs[t.value]);
    else if (t.value === ")" || t.value === "}" || t.value === "]") {
      if (stack.pop() !== t.value) return -1;
      if (stack.length === 0) return k;
    }
  }
  return -1;
}

/** Whether the braces `{ ... }` from `open` to `close` name only `type` members (and some). */
function onlyTypeNames(tokens: readonly Token[], open: number, close: number): boolean {
  let members = 0;
  let atStart = true;
  for (let k = open + 1; k < close; k++) {
    const t = tokens[k];
    if (isPunct(t, ",")) {
      atStart = true;
      continue;
    }
    if (atStart) {
      members++;
      const next = tokens[k + 1];
      // `type` as a modifier is followed by a name; `{ type }` or `{ type as t }` name `type`.
      if (!isIdent(t, "type") || next === undefined || isPunct(next, ",") || k + 1 === close) {
        return false;
      }
      if (isIdent(next, "as") && (isPunct(tokens[k + 3], ",") || k + 3 === close)) return false;
      atStart = false;
    }
  }
  return members > 0;
}

/**
 * The exported names the braces `{ ... }` from `open` to `close` take (`a as b` takes `a`; a
 * `type` modifier is dropped; `"x" as y` takes `x`).
 */
function braceNames(tokens: readonly Token[], open: number, close: number): string[] {
  const out: string[] = [];
  let member: Token[] = [];
  const flush = () => {
    const m = member.filter((x) => x.kind === "ident" || x.kind === "string");
    // `type a`, `type a as b`: the first name after the modifier; `type` alone names `type`.
    const named = m.length > 1 && isIdent(m[0], "type") && !isIdent(m[1], "as") ? m.slice(1) : m;
    if (named.length > 0) out.push(named[0].value);
    member = [];
  };
  for (let k = open + 1; k < close; k++) {
    if (isPunct(tokens[k], ",")) flush();
    else member.push(tokens[k]);
  }
  flush();
  return out;
}

/** The string a token spells if it is a literal specifier: a string, or a plain template. */
function literal(t: Token | undefined): string | null {
  if (t?.kind === "string") return t.value;
  if (t?.kind === "template" && !t.substituted) return t.value;
  return null;
}

/**
 * Reads every import of a TypeScript module: `import ... from`, `import "x"`, `import type`,
 * `export ... from`, `export * from`, `import x = require("x")`, `typeof import("x")` and dynamic
 * `import(...)`. Comments, strings and template text are not code, so an import written in them
 * (a JSDoc example) is not an import.
 */
export function parseImports(src: string): ParsedModule {
  const { tokens, problems } = tokenize(src);
  const imports: ImportSite[] = [];

  /** From token `k`, the `from "x"` at bracket depth 0 that ends the clause; -1 if none. */
  const findFrom = (k: number): number => {
    let depth = 0;
    for (; k < tokens.length; k++) {
      const t = tokens[k];
      if (t.kind === "punct" && (t.value === "{" || t.value === "(" || t.value === "[")) depth++;
      else if (t.kind === "punct" && (t.value === "}" || t.value === ")" || t.value === "]")) {
        depth--;
      } else if (depth === 0 && isPunct(t, ";")) return -1;
      else if (depth === 0 && isIdent(t, "from") && tokens[k + 1]?.kind === "string") {
        return k + 1;
      } else if (depth === 0 && t.kind === "string") return -1;
      if (depth < 0) return -1;
    }
    return -1;
  };

  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== "ident" || (t.value !== "import" && t.value !== "export")) continue;
    const prev = tokens[k - 1];
    const next = tokens[k + 1];
    // A member (`x.import`), an object key (`{ import: 1 }`) or `import.meta`.
    if (isPunct(prev, ".") || isPunct(prev, "?.") || isPunct(next, ":") || isPunct(next, ".")) {
      continue;
    }

    if (t.value === "export") {
      let j = k + 1;
      let typeOnly = false;
      if (
        isIdent(tokens[j], "type") && (isPunct(tokens[j + 1], "{") || isPunct(tokens[j + 1], "*"))
      ) {
        typeOnly = true;
        j++;
      }
      if (isPunct(tokens[j], "*")) {
        const s = findFrom(j + 1);
        if (s < 0) problems.push({ line: t.line, message: '`export *` without `from "..."`' });
        else {
          imports.push({
            specifier: tokens[s].value,
            line: tokens[s].line,
            kind: "re-export",
            typeOnly,
          });
        }
      } else if (isPunct(tokens[j], "{")) {
        const close = closing(tokens, j);
        if (close < 0) continue;
        const s = close + 2;
        if (isIdent(tokens[close + 1], "from") && tokens[s]?.kind === "string") {
          typeOnly ||= onlyTypeNames(tokens, j, close);
          imports.push({
            specifier: tokens[s].value,
            line: tokens[s].line,
            kind: "re-export",
            typeOnly,
            names: braceNames(tokens, j, close),
          });
        }
      }
      continue;
    }

    // `import`.
    if (isPunct(next, "(")) {
      const close = closing(tokens, k + 1);
      if (close === k + 2) continue; // `import()`: a method named import, not an import.
      if (close > 0 && isPunct(tokens[close + 1], "{")) continue; // `import(a) { ... }`: a method.
      const arg = tokens[k + 2];
      const spec = literal(arg);
      const after = tokens[k + 3];
      const typeQuery = isIdent(prev, "typeof");
      const kind = typeQuery ? "type-query" : "dynamic";
      if (spec !== null && (isPunct(after, ")") || isPunct(after, ","))) {
        imports.push({ specifier: spec, line: arg.line, kind, typeOnly: typeQuery });
      } else {
        const end = close < 0 ? Math.min(tokens.length, k + 12) : close;
        const argument = tokens.slice(k + 2, end).map((x) =>
          x.kind === "string" ? JSON.stringify(x.value) : x.kind === "template" ? "`...`" : x.value
        ).join(" ");
        imports.push({ specifier: null, line: t.line, kind, typeOnly: typeQuery, argument });
      }
      continue;
    }
    if (next?.kind === "string") {
      imports.push({
        specifier: next.value,
        line: next.line,
        kind: "side-effect",
        typeOnly: false,
        names: [],
      });
      continue;
    }
    // A declaration. `import type X from`, but `import type from "x"` imports a default `type`.
    let j = k + 1;
    let typeOnly = false;
    const afterType = tokens[j + 1];
    if (
      isIdent(tokens[j], "type") && afterType !== undefined && !isIdent(afterType, "from") &&
      !isPunct(afterType, ",") && !isPunct(afterType, "=")
    ) {
      typeOnly = true;
      j++;
    }
    // `import x = require("x")` (or `import x = A.B`, which imports nothing).
    if (tokens[j]?.kind === "ident" && isPunct(tokens[j + 1], "=")) {
      const s = tokens[j + 4];
      if (
        isIdent(tokens[j + 2], "require") && isPunct(tokens[j + 3], "(") && s?.kind === "string"
      ) {
        imports.push({ specifier: s.value, line: s.line, kind: "import-equals", typeOnly });
      }
      continue;
    }
    if (isPunct(tokens[j], "{")) {
      const close = closing(tokens, j);
      if (close > 0 && isIdent(tokens[close + 1], "from")) {
        typeOnly ||= onlyTypeNames(tokens, j, close);
      }
    }
    const s = findFrom(j);
    if (s < 0) {
      problems.push({ line: t.line, message: "an `import` this parser cannot read" });
      continue;
    }
    // The names: a default binding, then braces; a namespace (`* as ns`) takes the whole module.
    let names: string[] | undefined = [];
    for (let k = j; k < s - 1; k++) {
      const tk = tokens[k];
      if (isPunct(tk, "*")) {
        names = undefined;
        break;
      }
      if (isPunct(tk, "{")) {
        const close = closing(tokens, k);
        names.push(...braceNames(tokens, k, close));
        k = close;
      } else if (tk.kind === "ident") names.push("default");
    }
    imports.push({
      specifier: tokens[s].value,
      line: tokens[s].line,
      kind: "import",
      typeOnly,
      ...(names === undefined ? {} : { names }),
    });
  }
  return { imports, problems };
}

// ---------------------------------------------------------------------------------------------
// Specifiers

/** Where a specifier leads. */
export type Resolution =
  | { kind: "local"; path: string }
  | { kind: "external"; name: string }
  | { kind: "outside"; why: string };

/**
 * Resolves `specifier`, imported by the repository file `from` (a `/`-separated path relative to
 * the repository root): a relative specifier to a repository path; anything else that is not a
 * path (`npm:`, `node:`, `jsr:`, a URL, an import-map name like `zod`) is external.
 */
export function resolveSpecifier(from: string, specifier: string): Resolution {
  if (specifier.startsWith("./") || specifier.startsWith("../")) {
    const path = posix.normalize(posix.join(posix.dirname(from), specifier));
    if (path === ".." || path.startsWith("../")) {
      return { kind: "outside", why: "it resolves outside the repository" };
    }
    return { kind: "local", path };
  }
  if (specifier.startsWith("/") || specifier.startsWith("file:")) {
    return { kind: "outside", why: "an absolute path is not portable; import it relatively" };
  }
  return { kind: "external", name: externalName(specifier) };
}

/**
 * The package an external specifier names, without version or subpath: `npm:zod@4/x` ->
 * `npm:zod`, `node:fs/promises` -> `node:fs`, `zod/v4` -> `zod`, `@a/b/c` -> `@a/b`; a URL as is.
 */
export function externalName(specifier: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(specifier)) return specifier;
  const colon = /^(npm|jsr|node):/.exec(specifier);
  const scheme = colon ? colon[0] : "";
  let rest = specifier.slice(scheme.length).replace(/^\//, "");
  const parts = rest.split("/");
  rest = rest.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  const at = rest.indexOf("@", 1);
  if (at > 0) rest = rest.slice(0, at);
  return scheme + rest;
}

/** Whether `name` is allowed by `allow` (exact names, or a prefix ending in `*`: `node:*`). */
export function externalAllowed(name: string, allow: readonly string[]): boolean {
  return allow.some((a) => (a.endsWith("*") ? name.startsWith(a.slice(0, -1)) : a === name));
}

// ---------------------------------------------------------------------------------------------
// Layers

/** One layer: the files it covers and what it may import from outside the repository. */
export interface Layer {
  name: string;
  /**
   * What it covers: a folder (ending in `/`: every file under it) or a file, relative to the
   * repository root. Each entry is a unit for the cycle and rank rules.
   */
  paths: readonly string[];
  /**
   * When true, the units may import each other only downward in the order of `paths` (an entry
   * imports only entries listed after it). Otherwise any direction, as long as no cycle forms.
   */
  ranked?: boolean;
  /** External packages it may import, as {@linkcode externalName} spells them; `node:*` etc. */
  externals?: readonly string[];
  /**
   * When true, each folder entry's surface is its `mod.ts`: a file outside the folder imports
   * from it only `mod.ts` itself, or, to load no more than it uses, a name `mod.ts` re-exports
   * straight from the file that defines it (as a package's export map lists its files beside
   * `mod.ts`). A file `mod.ts` re-exports nothing from is private to the folder.
   */
  surfaces?: boolean;
}

/** The layer table: what is scanned, and the layers from top to bottom. */
export interface LayerTable {
  /** What to scan: folders (ending in `/`) and files, relative to the repository root. */
  scan: readonly string[];
  /** Top first: a layer may import its own units and the layers after it, never those before. */
  layers: readonly Layer[];
}

/** Where a file sits in the table. */
export interface Place {
  layer: number;
  /** The `paths` entry that covers it. */
  unit: string;
  /** Its rank within its layer (the entry's index). */
  rank: number;
}

/** Problems with the table itself (duplicate or malformed entries); empty when it is usable. */
export function tableProblems(table: LayerTable): string[] {
  const out: string[] = [];
  const seen = new Map<string, string>();
  for (const layer of table.layers) {
    for (const p of layer.paths) {
      if (p === "" || p.startsWith("/") || p.startsWith("./") || p.split("/").includes("..")) {
        out.push(`layer ${layer.name}: ${JSON.stringify(p)} must be a path relative to the root`);
      }
      const other = seen.get(p);
      if (other !== undefined) {
        out.push(`${JSON.stringify(p)} is in both ${other} and ${layer.name}`);
      }
      seen.set(p, layer.name);
    }
  }
  return out;
}

/** The table entry covering `path` (the longest one), or null. */
export function placeOf(table: LayerTable, path: string): Place | null {
  let best: Place | null = null;
  table.layers.forEach((layer, li) => {
    layer.paths.forEach((p, rank) => {
      const covers = p.endsWith("/") ? path.startsWith(p) : path === p;
      if (covers && (best === null || p.length > best.unit.length)) {
        best = { layer: li, unit: p, rank };
      }
    });
  });
  return best;
}

// ---------------------------------------------------------------------------------------------
// Checking

/** The rules, in the order a report lists them. */
export const RULES = [
  "unparsable",
  "uncovered",
  "missing",
  "outside",
  "dynamic-nonliteral",
  "external",
  "upward",
  "rank",
  "surface",
  "folder-cycle",
  "file-cycle",
] as const;

/** A rule of {@linkcode RULES}. */
export type Rule = typeof RULES[number];

/** One breach of the layering, with enough to act on. */
export interface Violation {
  rule: Rule;
  /** The importing file (for `uncovered`, the file; for a cycle, the first hop's file). */
  file: string;
  line: number;
  /** The specifier as written ("" where none applies). */
  specifier: string;
  message: string;
}

/** The sources to check: repository path -> text, and which other local paths exist. */
export interface Tree {
  files: ReadonlyMap<string, string>;
  /** Local paths imported but not scanned that exist (JSON, files outside `scan`). */
  present: ReadonlySet<string>;
}

/** One resolved local import: a graph edge between files, or between the units holding them. */
interface Edge {
  from: string;
  to: string;
  /** The importing file. */
  file: string;
  site: ImportSite;
}

const describe = (s: ImportSite) =>
  `${s.typeOnly ? "type-only " : ""}${s.kind === "dynamic" ? "dynamic " : ""}import of ` +
  JSON.stringify(s.specifier);

/**
 * Checks a tree against a layer table. Pure: `tree` holds the sources and which other paths
 * exist. Returns every violation, in {@linkcode RULES} order, then by file and line.
 */
export function checkTree(tree: Tree, table: LayerTable): Violation[] {
  const problems = tableProblems(table);
  if (problems.length > 0) throw new Error(`the layer table is malformed:\n${problems.join("\n")}`);
  const out: Violation[] = [];
  const edges: Edge[] = [];
  const files = [...tree.files.keys()].sort();

  for (const file of files) {
    const place = placeOf(table, file);
    if (place === null) {
      out.push({
        rule: "uncovered",
        file,
        line: 1,
        specifier: "",
        message: `${file} is in no layer: add it (or its folder) to the layer table, or move it`,
      });
    }
    const parsed = parseImports(tree.files.get(file) as string);
    for (const p of parsed.problems) {
      out.push({
        rule: "unparsable",
        file,
        line: p.line,
        specifier: "",
        message: `${p.message}; its imports cannot be checked until the parser reads it`,
      });
    }
    for (const site of parsed.imports) {
      const at = { file, line: site.line };
      if (site.specifier === null) {
        out.push({
          ...at,
          rule: "dynamic-nonliteral",
          specifier: "",
          message: `import(${site.argument ?? ""}) has no literal specifier, so its layer ` +
            `cannot be checked: import a string literal (one import() per target)`,
        });
        continue;
      }
      const r = resolveSpecifier(file, site.specifier);
      const spec = { ...at, specifier: site.specifier };
      if (r.kind === "outside") {
        out.push({ ...spec, rule: "outside", message: `${describe(site)}: ${r.why}` });
        continue;
      }
      if (r.kind === "external") {
        const allow = place === null ? [] : table.layers[place.layer].externals ?? [];
        if (place !== null && !externalAllowed(r.name, allow)) {
          const layer = table.layers[place.layer].name;
          const may = table.layers.filter((l) => externalAllowed(r.name, l.externals ?? []))
            .map((l) => l.name);
          out.push({
            ...spec,
            rule: "external",
            message: `${describe(site)}: layer ${layer} may not import ${r.name}` +
              (may.length > 0 ? ` (only ${may.join(", ")} may)` : " (no layer may)") +
              `; move the use down, or add ${r.name} to ${layer}'s externals in the table`,
          });
        }
        continue;
      }
      if (!tree.files.has(r.path) && !tree.present.has(r.path)) {
        out.push({
          ...spec,
          rule: "missing",
          message: `${describe(site)}: ${r.path} does not exist`,
        });
        continue;
      }
      const target = placeOf(table, r.path);
      if (target === null) {
        // A scanned file in no layer is reported once, as uncovered; a file outside the scan here.
        if (!tree.files.has(r.path)) {
          out.push({
            ...spec,
            rule: "outside",
            message: `${describe(site)}: ${r.path} is in no layer (lib must not import it)`,
          });
        }
      } else if (place !== null) {
        const from = table.layers[place.layer];
        const to = table.layers[target.layer];
        if (target.layer < place.layer) {
          out.push({
            ...spec,
            rule: "upward",
            message: `${describe(site)}: ${from.name} (${place.unit}) imports ${r.path} in ` +
              `${to.name} (${target.unit}), a higher layer; move what it needs down to ` +
              `${from.name} or below, or pass it in`,
          });
        } else if (
          target.layer === place.layer && from.ranked === true && target.unit !== place.unit &&
          target.rank < place.rank
        ) {
          out.push({
            ...spec,
            rule: "rank",
            message: `${describe(site)}: within ${from.name}, ${place.unit} may import only ` +
              `units listed after it, and ${target.unit} is listed before it`,
          });
        }
      }
      if (tree.files.has(r.path)) edges.push({ from: file, to: r.path, file, site });
    }
  }

  out.push(...surfaceViolations(tree, table, edges));

  // Cycles between units (folders and files named in the table), then between files.
  const unitOf = (f: string) => placeOf(table, f)?.unit ?? null;
  const unitEdges: Edge[] = [];
  for (const e of edges) {
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    if (a !== null && b !== null && a !== b) unitEdges.push({ ...e, from: a, to: b });
  }
  const upward = (e: Edge) =>
    (placeOf(table, e.to)?.layer ?? 0) < (placeOf(table, e.file)?.layer ?? 0);
  out.push(...cycles(unitEdges, "folder-cycle", upward));
  out.push(...cycles(edges, "file-cycle", upward));

  const order = (r: Rule) => RULES.indexOf(r);
  return out.sort((a, b) =>
    order(a.rule) - order(b.rule) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
    a.line - b.line
  );
}

/**
 * What each surface folder's `mod.ts` re-exports, per defining file: the names (as that file
 * exports them), or `"all"` for an `export *`. Pure.
 */
export function surfaceOf(
  tree: Tree,
  unit: string,
): Map<string, Set<string> | "all"> | null {
  const mod = `${unit}mod.ts`;
  const text = tree.files.get(mod);
  if (text === undefined) return null;
  const out = new Map<string, Set<string> | "all">();
  for (const site of parseImports(text).imports) {
    if (site.kind !== "re-export" || site.specifier === null) continue;
    const r = resolveSpecifier(mod, site.specifier);
    if (r.kind !== "local") continue;
    const had = out.get(r.path);
    if (site.names === undefined || had === "all") out.set(r.path, "all");
    else out.set(r.path, new Set([...(had ?? []), ...site.names]));
  }
  return out;
}

/** The `surface` rule over the resolved local imports (see {@linkcode Layer.surfaces}). */
function surfaceViolations(tree: Tree, table: LayerTable, edges: readonly Edge[]): Violation[] {
  const out: Violation[] = [];
  const surfaces = new Map<string, Map<string, Set<string> | "all"> | null>();
  for (const e of edges) {
    const target = placeOf(table, e.to);
    if (target === null || !target.unit.endsWith("/")) continue;
    if (table.layers[target.layer].surfaces !== true) continue;
    if (e.from.startsWith(target.unit)) continue;
    const mod = `${target.unit}mod.ts`;
    if (e.to === mod) continue;
    if (!surfaces.has(target.unit)) surfaces.set(target.unit, surfaceOf(tree, target.unit));
    const surface = surfaces.get(target.unit) ?? null;
    const at = { file: e.file, line: e.site.line, specifier: e.site.specifier ?? "" };
    const what = `${describe(e.site)}: ${e.to} is inside ${target.unit}`;
    if (surface === null) {
      out.push({
        ...at,
        rule: "surface",
        message: `${what}, which has no mod.ts: give the folder its mod.ts (its surface) ` +
          `re-exporting what outsiders use`,
      });
      continue;
    }
    const pub = surface.get(e.to);
    if (pub === undefined) {
      out.push({
        ...at,
        rule: "surface",
        message: `${what}, and ${mod} re-exports nothing from it (the file is private to its ` +
          `folder): import from ${mod}, or re-export what you need there`,
      });
      continue;
    }
    if (pub === "all") continue;
    const names = e.site.names;
    if (names === undefined) {
      // A dynamic import loads a public file lazily; a namespace import or `export *` would take
      // its private names too.
      if (e.site.kind === "dynamic" || e.site.kind === "type-query") continue;
      out.push({
        ...at,
        rule: "surface",
        message: `${what}, and takes the whole module: import the names ${mod} re-exports ` +
          `from it by name, or import from ${mod}`,
      });
      continue;
    }
    const missing = names.filter((n) => !pub.has(n));
    if (missing.length > 0) {
      out.push({
        ...at,
        rule: "surface",
        message: `${what}, and ${mod} does not re-export ${missing.join(", ")} from it: ` +
          `add ${missing.length > 1 ? "them" : "it"} to ${mod} (the folder's surface), or ` +
          `use what it exports`,
      });
    }
  }
  return out;
}

/**
 * One violation per strongly connected group of the graph `edges` (with more than one node, or
 * a node importing itself), naming one shortest cycle hop by hop, each hop with the first import
 * that makes it (and how many more do); a hop some import of which goes upward is marked.
 */
function cycles(
  edges: readonly Edge[],
  rule: "folder-cycle" | "file-cycle",
  upward: (e: Edge) => boolean,
): Violation[] {
  // Tarjan's algorithm over the nodes in sorted order, for stable output.
  const out: Violation[] = [];
  const adjacent = new Map<string, Edge[]>();
  const sites = new Map<string, Edge[]>();
  for (const e of edges) {
    if (!adjacent.has(e.from)) adjacent.set(e.from, []);
    const key = `${e.from}\n${e.to}`;
    if (!sites.has(key)) {
      sites.set(key, []);
      adjacent.get(e.from)?.push(e);
    }
    sites.get(key)?.push(e);
  }
  const nodes = [...new Set(edges.flatMap((e) => [e.from, e.to]))].sort();
  for (const list of adjacent.values()) {
    list.sort((a, b) => (a.to < b.to ? -1 : a.to > b.to ? 1 : 0));
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const e of adjacent.get(v) ?? []) {
      if (!index.has(e.to)) {
        visit(e.to);
        low.set(v, Math.min(low.get(v) as number, low.get(e.to) as number));
      } else if (onStack.has(e.to)) {
        low.set(v, Math.min(low.get(v) as number, index.get(e.to) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      groups.push(group.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);

  for (const group of groups) {
    const members = new Set(group);
    const start = group[0];
    const self = sites.get(`${start}\n${start}`);
    if (group.length === 1 && self === undefined) continue;
    // The shortest path from start back to start inside the group (breadth first).
    const cameBy = new Map<string, Edge>();
    const queue = [start];
    let closingEdge: Edge | null = null;
    for (let q = 0; q < queue.length && closingEdge === null; q++) {
      for (const e of adjacent.get(queue[q]) ?? []) {
        if (!members.has(e.to)) continue;
        if (e.to === start) {
          closingEdge = e;
          break;
        }
        if (!cameBy.has(e.to)) {
          cameBy.set(e.to, e);
          queue.push(e.to);
        }
      }
    }
    if (closingEdge === null) continue;
    const hops: Edge[] = [closingEdge];
    for (let at = closingEdge.from; at !== start;) {
      const e = cameBy.get(at) as Edge;
      hops.unshift(e);
      at = e.from;
    }
    const first = hops[0];
    const firstSite = (sites.get(`${first.from}\n${first.to}`) as Edge[])[0];
    const hopLine = (hop: Edge) => {
      const all = sites.get(`${hop.from}\n${hop.to}`) as Edge[];
      const s = all[0];
      const more = all.length > 1 ? ` (and ${all.length - 1} more)` : "";
      const hopName = rule === "folder-cycle" ? `${hop.from} -> ${hop.to}: ` : "";
      const up = all.some(upward) ? " [upward]" : "";
      return `  ${hopName}${s.file}:${s.site.line} ${describe(s.site)}${more}${up}`;
    };
    const what = rule === "folder-cycle" ? "folders (table units)" : "files";
    const lines = [
      `a cycle between ${what}: ${[start, ...hops.map((h) => h.to)].join(" -> ")}; break one hop:`,
      ...hops.map(hopLine),
    ];
    if (group.length > 1) {
      const inCycle = new Set(hops.map((h) => `${h.from}\n${h.to}`));
      const others = group.flatMap((v) =>
        (adjacent.get(v) ?? []).filter((e) =>
          members.has(e.to) && !inCycle.has(`${e.from}\n${e.to}`)
        )
      );
      if (others.length > 0) {
        lines.push(
          `the ${group.length} ${what} ${group.join(", ")} form one group; its other imports:`,
          ...others.map(hopLine),
        );
      }
    }
    out.push({
      rule,
      file: firstSite.file,
      line: firstSite.site.line,
      specifier: firstSite.site.specifier ?? "",
      message: lines.join("\n"),
    });
  }
  return out;
}

/** Formats violations grouped by rule, one line per violation (cycle hops indented below). */
export function formatViolations(violations: readonly Violation[]): string {
  const out: string[] = [];
  for (const rule of RULES) {
    const mine = violations.filter((v) => v.rule === rule);
    if (mine.length === 0) continue;
    out.push(`${rule} (${mine.length}):`);
    for (const v of mine) out.push(`  ${v.file}:${v.line}: ${v.message.replaceAll("\n", "\n  ")}`);
  }
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------
// The I/O edge

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

/** Every source file under `dir` (relative to `root`), `/`-separated. */
async function walk(root: string, dir: string, out: string[]): Promise<void> {
  for await (const e of Deno.readDir(posix.join(root, dir))) {
    const rel = posix.join(dir, e.name);
    if (e.isDirectory) await walk(root, rel, out);
    else if (e.isFile && SOURCE.test(e.name)) out.push(rel);
  }
}

/** Reads the tree `table.scan` names under `root`, and which other imported paths exist. */
export async function loadTree(root: string, table: LayerTable): Promise<Tree> {
  const paths: string[] = [];
  for (const entry of table.scan) {
    if (entry.endsWith("/")) await walk(root, entry.slice(0, -1), paths);
    else paths.push(entry);
  }
  const files = new Map<string, string>();
  for (const p of paths.sort()) files.set(p, await Deno.readTextFile(posix.join(root, p)));
  const present = new Set<string>();
  for (const [file, text] of files) {
    for (const site of parseImports(text).imports) {
      if (site.specifier === null) continue;
      const r = resolveSpecifier(file, site.specifier);
      if (r.kind !== "local" || files.has(r.path) || present.has(r.path)) continue;
      const info = await Deno.stat(posix.join(root, r.path)).catch(() => null);
      if (info?.isFile) present.add(r.path);
    }
  }
  return { files, present };
}

/** Loads and checks the tree under `root` (an absolute path) against `table`. */
export async function checkRepo(root: string, table: LayerTable): Promise<Violation[]> {
  return checkTree(await loadTree(root, table), table);
}

// ---------------------------------------------------------------------------------------------
// The map

/**
 * Who imports whom between the table's units: each unit (in table order) with the other units it
 * imports (type-only and dynamic imports count), in table order. Pure.
 */
export function unitImports(tree: Tree, table: LayerTable): Map<string, string[]> {
  const units = table.layers.flatMap((l) => l.paths);
  const order = (u: string) => units.indexOf(u);
  const found = new Map<string, Set<string>>(units.map((u) => [u, new Set<string>()]));
  for (const [file, text] of tree.files) {
    const from = placeOf(table, file)?.unit;
    if (from === undefined) continue;
    for (const site of parseImports(text).imports) {
      if (site.specifier === null) continue;
      const r = resolveSpecifier(file, site.specifier);
      if (r.kind !== "local") continue;
      const to = placeOf(table, r.path)?.unit;
      if (to !== undefined && to !== from) found.get(from)?.add(to);
    }
  }
  return new Map(
    units.map((u) => [u, [...(found.get(u) ?? [])].sort((a, b) => order(a) - order(b))]),
  );
}

/** The table's entries that name nothing under `root` (a folder that is gone, a file renamed). */
export async function absentEntries(root: string, table: LayerTable): Promise<string[]> {
  const out: string[] = [];
  for (const p of [...table.scan, ...table.layers.flatMap((l) => l.paths)]) {
    const info = await Deno.stat(posix.join(root, p)).catch(() => null);
    const ok = p.endsWith("/") ? info?.isDirectory === true : info?.isFile === true;
    if (!ok) out.push(p);
  }
  return out;
}
