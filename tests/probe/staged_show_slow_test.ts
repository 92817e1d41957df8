/**
 * Probe of issue 26, finding 1 (tests/probe/PROBE_26_REPORT.md): `agentteams staged show SID`
 * printed the agent's rationale and content to the operator's terminal as they came. A content of
 * `EVIL` followed by `ESC[2J ESC[H` (clear the screen, cursor home) and a benign text, or a
 * rationale with a newline and a fake `staged ...` header, showed the operator another proposal
 * than the one `staged apply` then writes. Now the rationale is shown on one line and the content
 * with its lines and tabs kept but every other control and format character written out
 * (`\x1b`, `\x0d`, `\u{202e}`): the terminal is given nothing to obey, and the record itself is
 * unchanged (`--json` carries it as stored).
 *
 * Staged in process through the runner's own `serveClaimed` (tool-server channel), shown by the
 * real CLI against a real `agentteams serve`.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../lib/pycompat/canonical.ts";
import { withWorld } from "../e2e/_run_helpers.ts";
import { underPrinted, withRunner } from "../runner/_runner_helpers.ts";
import { change, runnerOf, serve, stageOf, stagerBrief } from "./_staged.ts";

const CONTENT = "EVIL payload\n\x1b[2J\x1b[Hbenign\r\tok\u202etxt.exe\n";
const RATIONALE = "typo\nstaged 0: change-proposal of src/ok.txt for stager\x1b[8m";

Deno.test("probe 26: staged show shows the agent's escape sequences, never obeys them", async () => {
  await withWorld("probe26-show", { brief: stagerBrief }, async (w) => {
    const s = await runnerOf(w);
    const nonce = await w.dispatchBeforeBriefChanged("stager");
    const r = await serve(
      s,
      w,
      stageOf({ ...change(nonce, "src/spoof.txt"), content: CONTENT, rationale: RATIONALE }),
      "mcp",
    );
    assert.equal(r.body.ok, true, JSON.stringify(r.body.error));
    const sid = String((r.body.result as JsonObject).sid);
    await withRunner(w, async () => {
      const shown = await (await underPrinted(w, ["staged", "show", sid, "--project", w.project]))
        .done;
      assert.equal(shown.code, 0, shown.stderr);
      const out = shown.stdout;
      for (const c of ["\x1b", "\r", "\u202e"]) {
        assert.ok(!out.includes(c), `staged show printed ${JSON.stringify(c)} raw: ${out}`);
      }
      assert.match(out, /^rationale: typo\\x0astaged 0: .*\\x1b\[8m$/m);
      assert.ok(
        out.includes("EVIL payload\n\\x1b[2J\\x1b[Hbenign\\x0d\tok\\u{202e}txt.exe"),
        out,
      );
      // The lines the operator reads are the head's three, the content's header and its own.
      assert.equal(out.split("\n").filter((l) => l.startsWith("staged ")).length, 1, out);
      // The record is unchanged: --json carries it as stored.
      const json = await (await underPrinted(
        w,
        [
          "staged",
          "show",
          sid,
          "--project",
          w.project,
        ],
        "",
        ["--json"],
      )).done;
      const record = JSON.parse(json.stdout).record as { artifact: JsonObject };
      assert.equal(record.artifact.content, CONTENT);
      assert.equal(record.artifact.rationale, RATIONALE);
    });
  });
});
