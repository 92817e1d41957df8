/**
 * The `agentteams` executable. See `lib/cli/main.ts`; the library surface is `lib/mod.ts`.
 *
 * `--version` alone is answered here, before the CLI is loaded: it uses nothing else (a start
 * loads only what the command uses). Everything else, `--version` among other words included,
 * goes to `runCli`, which prints the same line for it. The CLI is loaded as a command's code is
 * (`loadCode`): a launch that may not read it is refused `NOT_CAPABLE`, naming the flag.
 *
 * @module
 */
import { VERSION } from "./lib/cli/version.ts";
import { loadCode } from "./lib/cli/code_dir.ts";
import { otherRefusal } from "./lib/errors.ts";

if (import.meta.main) {
  if (Deno.args.length === 1 && Deno.args[0] === "--version") {
    console.log(`agentteams ${VERSION}`);
    Deno.exit(0);
  }
  let cli: typeof import("./lib/cli/main.ts");
  try {
    cli = await loadCode(() => import("./lib/cli/main.ts"));
  } catch (e) {
    const { code, message } = otherRefusal(e);
    // The command table is what could not be loaded, so the refusal names the command as typed:
    // its leading words (at most two, each a lower-case word), as the CLI's own refusals do.
    const words: string[] = [];
    for (const a of Deno.args) {
      if (words.length === 2 || !/^[a-z][a-z-]*$/.test(a)) break;
      words.push(a);
    }
    console.error(
      `agentteams${words.length ? ` ${words.join(" ")}` : ""}: refused: ${code}: ${message}`,
    );
    if (Deno.args.includes("--json")) {
      console.log(JSON.stringify({ ok: false, error: { code, message } }));
    }
    Deno.exit(1);
  }
  Deno.exit(await cli.runCli(Deno.args));
}
