/**
 * Markdown front matter as the hosts find it: a first line `---`, a closing `---` line, YAML
 * between. A BOM or CRLF that would hide it from the host, and an unterminated block, are
 * findings. A front matter whose one-line values hold `: ` (long descriptions with examples) is
 * read by quoting those values on a second attempt, as Claude Code does; unlike Claude Code, this
 * strict reading never re-quotes the `tools:` line. What each host really reads (its `---`
 * boundary, its own retry, its YAML) is in the host models, lib/audit/hosts/.
 *
 * @module
 */
import { type Spot, spot } from "./finding.ts";
import { plainColonError } from "./plain_yaml.ts";
import { readYaml, type YNode } from "./yaml_tree.ts";

/** What reading a Markdown file's front matter gives. */
export interface FrontMatter {
  /** Whether the file opens with a `---` line (after a BOM, if any). */
  readonly present: boolean;
  /** The YAML root, when it was read. */
  readonly root: YNode | null;
  /** The findings. */
  readonly spots: Spot[];
  /** The front matter's lines (without the delimiters), LF-normalized. */
  readonly lines: readonly string[];
  /** The YAML text the root was read from (node offsets refer to it). */
  readonly yamlText: string;
}

const OPEN = /^---[ \t]*$/;

/**
 * Reads the front matter of a Markdown agent file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readFrontMatter } from "./front_matter.ts";
 * const fm = readFrontMatter("---\nname: a\ntools: Read\n---\nbody\n");
 * assert.equal(fm.present && fm.spots.length === 0, true);
 * ```
 */
export function readFrontMatter(text: string): FrontMatter {
  const spots: Spot[] = [];
  let t = text;
  if (t.startsWith("\uFEFF")) {
    spots.push(
      spot("FM_BOM", 1, 1, "starts with a byte-order mark, which can hide the front matter"),
    );
    t = t.slice(1);
  }
  // The lines up to the closing `---` only: the body (most of a file) is not split.
  const raw: string[] = [];
  const lines: string[] = [];
  let close = -1;
  for (let from = 0; from <= t.length;) {
    const nl = t.indexOf("\n", from);
    const r = t.slice(from, nl < 0 ? t.length : nl);
    const l = r.endsWith("\r") ? r.slice(0, -1) : r;
    raw.push(r);
    lines.push(l);
    if (lines.length === 1 && !OPEN.test(l)) {
      return { present: false, root: null, spots, lines: [], yamlText: "" };
    }
    if (lines.length > 1 && OPEN.test(l)) {
      close = lines.length - 1;
      break;
    }
    if (nl < 0) break;
    from = nl + 1;
  }
  const crEnd = close === -1 ? raw.length : close + 1;
  for (let i = 0; i < crEnd; i++) {
    if (raw[i].endsWith("\r")) {
      spots.push(
        spot("FM_CRLF", i + 1, raw[i].length, "ends a front-matter line with CRLF; use LF"),
      );
      break;
    }
  }
  if (close === -1) {
    spots.push(
      spot("FM_UNTERMINATED", 1, 1, "opens a front matter with `---` that never closes"),
    );
    return {
      present: true,
      root: null,
      spots,
      lines: lines.slice(1),
      yamlText: "",
    };
  }
  const body = lines.slice(1, close);
  const yamlText = body.join("\n") + (body.length > 0 ? "\n" : "");
  // Plain but for values holding `: `: it fails to parse (lib/audit/plain_yaml.ts), so the
  // retry is read first, and the text itself only when the retry fails too (for its findings).
  let read = plainColonError(yamlText) ? null : readYaml(yamlText, 2);
  if (read === null || read.spots.some((s) => s.code === "YAML_SYNTAX")) {
    const quoted = quoteColonValues(body);
    if (quoted !== null) {
      const second = readYaml(quoted.join("\n") + "\n", 2);
      if (!second.spots.some((s) => s.code === "YAML_SYNTAX")) {
        read = second;
        const at = quoted.findIndex((l, i) => l !== body[i]);
        const key = body[at].slice(0, body[at].indexOf(":"));
        spots.push(
          spot(
            "FM_LENIENT",
            at + 2,
            1,
            `the value of \`${key}:\` holds ": " unquoted, so the front matter parses only as ` +
              "Claude Code retries it; a strict host drops it whole, tools: included. Quote the value",
          ),
        );
      }
    }
  }
  read ??= readYaml(yamlText, 2);
  spots.push(...read.spots);
  return {
    present: true,
    root: read.root,
    spots,
    lines: body,
    yamlText: read.text,
  };
}

/** Keys whose one-line value is never re-quoted (the capability keys are read as written). */
const NEVER_REQUOTED = /^(tools|allowed-tools|allowedTools|mcpServers|permissionMode)$/;

/**
 * The front-matter lines with each top-level one-line plain value that holds `: `
 * double-quoted (what Claude Code does on a second attempt), or null when none needed it.
 */
function quoteColonValues(lines: readonly string[]): string[] | null {
  let changed = false;
  const out = lines.map((line) => {
    const m = /^([A-Za-z_][A-Za-z0-9_-]*):[ ]+(.*)$/.exec(line);
    if (m === null || NEVER_REQUOTED.test(m[1])) return line;
    const v = m[2];
    if (/^["'[{|>&*!%@`#]/.test(v)) return line;
    if (!v.includes(": ") && !v.endsWith(":")) return line;
    changed = true;
    return `${m[1]}: ${JSON.stringify(v)}`;
  });
  return changed ? out : null;
}

/**
 * The most lines, commas and opening brackets a front matter may hold (1,000) before the audit
 * stops reading it. A mapping's keys each need a line or a comma, and nesting needs brackets or
 * lines, so this bounds every mapping's size and depth: the host models read YAML as the hosts do,
 * duplicate-key checks included, which take time quadratic in a mapping's keys (20,000 keys took
 * the models over 30 s for one file); real front matters hold well under a hundred.
 */
export const MAX_FRONT_MATTER_ITEMS = 1000;

/**
 * How many lines, commas and opening brackets a Markdown file's front matter holds, when that is
 * more than {@link MAX_FRONT_MATTER_ITEMS}, else null. The front matter is counted up to its
 * closing `---` line, or to the end of the file when none closes it (a host may cut it anywhere).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { frontMatterTooLarge } from "./front_matter.ts";
 * assert.equal(frontMatterTooLarge("---\nname: a\n---\nbody\n"), null);
 * assert.equal(frontMatterTooLarge("---\nk: {" + "a, ".repeat(2000) + "}\n---\n"), 2002);
 * ```
 */
export function frontMatterTooLarge(text: string): number | null {
  const close = /\n---[ \t]*\r?(\n|$)/.exec(text.slice(3));
  const region = close === null ? text : text.slice(0, close.index + 3);
  let n = 0;
  for (let i = 0; i < region.length; i++) {
    const c = region.charCodeAt(i);
    // \n , [ {
    if (c === 10 || c === 44 || c === 91 || c === 123) n++;
  }
  return n > MAX_FRONT_MATTER_ITEMS ? n : null;
}
