/**
 * The generated part of docs/architecture.md: who imports whom between the layer table's units,
 * as the import checker reads the tree. It sits between two marker lines in the doc;
 * tests/architecture_test.ts checks that the doc holds exactly what this module makes, and
 * `deno run --allow-read --allow-write tests/_arch/report.ts --write-doc` writes it (then
 * `deno fmt docs/architecture.md`).
 *
 * @module
 */

import type { LayerTable } from "./imports.ts";

/** The line before the generated section. */
export const BEGIN =
  "<!-- BEGIN import map: generated from tests/_arch/layers.ts by tests/_arch/report.ts --write-doc; do not edit -->";
/** The line after it. */
export const END = "<!-- END import map -->";

/** The section's text (without the markers): one line per unit, layer by layer. Pure. */
export function importMapText(
  graph: ReadonlyMap<string, readonly string[]>,
  table: LayerTable,
): string {
  const code = (u: string) => `\`${u}\``;
  const lines: string[] = [];
  for (const layer of table.layers) {
    lines.push(`- ${layer.name}:`);
    for (const unit of layer.paths) {
      const to = graph.get(unit) ?? [];
      lines.push(
        `  - ${code(unit)} imports ${to.length === 0 ? "nothing in lib" : to.map(code).join(", ")}`,
      );
    }
  }
  return lines.join("\n");
}

/** Whitespace-insensitive form, so `deno fmt`'s line wrapping does not count as a difference. */
export function normalized(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The generated section of `doc` (between the markers), or `null` when the markers are missing. */
export function sectionOf(doc: string): string | null {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) return null;
  return doc.slice(a + BEGIN.length, b);
}

/** `doc` with its generated section replaced by `section`. Throws when the markers are missing. */
export function withSection(doc: string, section: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md lacks the markers ${BEGIN} ... ${END}`);
  return `${doc.slice(0, a + BEGIN.length)}\n\n${section}\n\n${doc.slice(b)}`;
}
