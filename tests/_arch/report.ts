/**
 * Prints what the import checker finds on this repository with tests/_arch/layers.ts, grouped by
 * rule; exits 1 if it finds anything.
 *
 *     deno run --allow-read tests/_arch/report.ts
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { checkRepo, formatViolations } from "./imports.ts";
import { LAYERS } from "./layers.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const found = await checkRepo(root, LAYERS);
console.log(found.length === 0 ? "no violations" : formatViolations(found));
console.log(`${found.length} violation(s)`);
if (found.length > 0) Deno.exit(1);
