/**
 * The `agentteams` executable. See `lib/cli/main.ts`; the library surface is `lib/mod.ts`.
 *
 * @module
 */
import { runCli } from "./lib/cli/main.ts";

if (import.meta.main) Deno.exit(await runCli(Deno.args));
