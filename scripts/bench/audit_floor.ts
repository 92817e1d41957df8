/**
 * The whole-process floor of the audit bench (`deno task bench`, sections 7 and 7b): walk DIR, read every
 * file, and parse each agent file's front matter (each recipe whole) with the same `yaml` package
 * the audit uses. Prints the count of parsed documents.
 *
 * Usage: deno run --allow-read --allow-env=LOG_STREAM,LOG_TOKENS scripts/bench/audit_floor.ts DIR
 * (the `yaml` package reads those two variables)
 *
 * @module
 */
import { parse } from "yaml";

const dec = new TextDecoder();
let parsed = 0;

function walk(dir: string): void {
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) {
      walk(path);
      continue;
    }
    if (!e.isFile) continue;
    const text = dec.decode(Deno.readFileSync(path));
    if (path.endsWith(".md") && text.startsWith("---\n")) {
      const end = text.indexOf("\n---", 4);
      if (end > 0) {
        try {
          parse(text.slice(4, end + 1));
        } catch {
          // a front matter that is not YAML still cost its parse
        }
        parsed++;
      }
    } else if (path.endsWith(".yaml") || path.endsWith(".yml")) {
      try {
        parse(text);
      } catch {
        // likewise a recipe
      }
      parsed++;
    }
  }
}

if (import.meta.main) {
  const dir = Deno.args[0];
  if (dir === undefined) {
    console.error("usage: deno run --allow-read scripts/bench/audit_floor.ts DIR");
    Deno.exit(2);
  }
  walk(dir);
  console.log(parsed);
}
