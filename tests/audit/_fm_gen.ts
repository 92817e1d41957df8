/**
 * A generator of Claude agent files from the characters that split readings: `---` inside
 * values, `#`, quotes, tabs, CRLF, a BOM, spaces and parentheses in tool lists, flow lists, block
 * lists and block scalars, `: ` in one-line values (which sends Claude Code to its retry).
 */
import fc from "../_helpers/fc.ts";

const NAMES = ["Read", "Grep", "Edit", "Write", "Bash", "Task", "*", "mcp__x__y", "read"];
const TOOL_BITS = [
  ...NAMES,
  "Read(a b)",
  "Bash(git:*)",
  "(",
  ")",
  ",",
  ", ",
  " ",
  "\t",
  " # ",
  "#",
  "---",
  "'",
  '"',
  "[",
  "]",
  "&x",
  ": ",
];
const VALUE_BITS = ["Reviews", " ", "code", "---", ": ", "#", " #", "'", '"', "\t", "-", "|", ">"];

/** Mostly plain names joined as people write them, sometimes with a bit that splits readings. */
const toolsText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 })
      .chain((xs) => fc.constantFrom(", ", " ", ",").map((sep) => xs.join(sep))),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constantFrom("Read", "Read, Grep", "Read(src/**)"),
      fc.constantFrom(
        " # , Edit",
        " # Edit",
        " --- , Edit",
        " Edit",
        "(a) Edit",
        ", *",
        " &x",
        "#Edit",
      ),
    ).map(([a, b]) => a + b),
  },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom(...TOOL_BITS), { minLength: 0, maxLength: 6 })
      .map((xs) => xs.join("")),
  },
);
/** Mostly a plain description, sometimes one holding `: `, `---`, `#` or quotes. */
const valueText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant("Reviews code") },
  { weight: 2, arbitrary: fc.constantFrom("Use it: now", "Reviews --- code", "Reviews # code") },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom(...VALUE_BITS), { minLength: 1, maxLength: 5 })
      .map((xs) => xs.join("")),
  },
);

/** One front-matter line group (a `tools:` in its shapes, a description, others). */
const group: fc.Arbitrary<string[]> = fc.oneof(
  toolsText.map((t) => [`tools: ${t}`]),
  toolsText.map((t) => [`tools: [${t}]`]),
  fc.array(fc.constantFrom(...NAMES, "Read # x", "'Edit'"), { minLength: 1, maxLength: 3 }).map((
    xs,
  ) => ["tools:", ...xs.map((x) => `  - ${x}`)]),
  fc.tuple(fc.constantFrom("|", ">"), toolsText).map(([s, t]) => [`tools: ${s}`, `  ${t}`]),
  toolsText.map((t) => [`\ttools: ${t}`]),
  valueText.map((v) => [`description: ${v}`]),
  valueText.map((v) => [`notes: |`, `  ${v}`, `  tools: Edit`]),
  valueText.map((v) => [`color: ${v}`]),
  fc.constant(["memory: project"] as string[]),
  fc.constant(["..."] as string[]),
);

/** A whole agent file: opening, a name, a description, groups, closing, a body. */
export const agentFile: fc.Arbitrary<string> = fc.record({
  bom: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  crlf: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  desc: valueText,
  groups: fc.array(group, { minLength: 0, maxLength: 4 }),
  close: fc.oneof(
    { weight: 4, arbitrary: fc.constant("---") },
    { weight: 1, arbitrary: fc.constantFrom("--- x", "---\t", "---x") },
  ),
}).map(({ bom, crlf, desc, groups, close }) => {
  const eol = crlf ? "\r\n" : "\n";
  const lines = ["---", "name: w", `description: ${desc}`, ...groups.flat(), close, "", "body"];
  return (bom ? "\uFEFF" : "") + lines.join(eol) + eol;
});
