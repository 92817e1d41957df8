/**
 * The floor of the audit's whole-process bench (issue 24 item 5): walk a directory, read each
 * `.md` file, cut its front matter and parse it with the same `yaml` package the audit uses.
 * Prints how many were parsed (so the work can't be skipped).
 *
 * Usage: deno run --allow-read --allow-env scripts/bench/audit_floor.ts DIR
 *
 * @module
 */
import { parse } from "yaml";

let parsed = 0;
const dec = new TextDecoder();
function visit(dir: string): void {
  for (const d of Deno.readDirSync(dir)) {
    const p = `${dir}/${d.name}`;
    if (d.isDirectory) visit(p);
    else if (d.isFile && d.name.endsWith(".md")) {
      const text = dec.decode(Deno.readFileSync(p));
      const end = text.startsWith("---\n") ? text.indexOf("\n---\n", 3) : -1;
      if (end < 0) continue;
      try {
        parse(text.slice(4, end + 1));
      } catch {
        // a front matter that is not YAML still cost its parse
      }
      parsed++;
    }
  }
}
visit(Deno.args[0]);
console.log(parsed);
