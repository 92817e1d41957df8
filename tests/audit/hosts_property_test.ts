/**
 * The property of the host models (issue 22, item 1): for generated agent files, the audit never
 * says clean where a modeled Claude Code version, or the Copilot CLI, loads the file with a tool
 * beyond read-only or every tool, or where the model can't tell what it grants.
 */
import assert from "node:assert/strict";
import fc from "../_helpers/fc.ts";
import { auditEntries } from "../../lib/audit/team.ts";
import { claudeReadings } from "../../lib/audit/hosts/claude.ts";
import { copilotCliReading } from "../../lib/audit/hosts/copilot.ts";
import { copilotAlias } from "../../lib/audit/check_markdown.ts";
import { classifyTool } from "../../lib/audit/tools.ts";
import { beyondReadOnly } from "../../lib/audit/hosts/grant.ts";
import { agentFile } from "./_fm_gen.ts";

const SECTION = "\n## Write Policy: Return Proposals, Never Write\n";

Deno.test("the audit never passes a file a Claude Code version loads beyond read-only", () => {
  let wide = 0;
  fc.assert(
    fc.property(agentFile, (file) => {
      const text = file + SECTION;
      const readings = claudeReadings(text);
      const grants = readings.filter((r) =>
        r.uncertain !== undefined ||
        (r.agent && r.grant !== null && beyondReadOnly(r.grant).length > 0)
      );
      if (grants.length === 0) return;
      wide++;
      const found = auditEntries([{ rel: ".claude/agents/w.md", state: "text", text }], {
        switchOn: true,
        frameworks: [],
      }).filter((f) => f.enforced && f.code !== "SETTINGS_DENY_MISSING");
      assert.ok(
        found.some((f) => f.severity === "error" || f.code === "TOOL_SHELL_WARN"),
        `${JSON.stringify(text)}: ${
          grants.map((g) => `${g.host} ${g.how}: ${JSON.stringify(g.grant)}`).join("; ")
        }, yet the audit says ${JSON.stringify(found.map((f) => f.code))}`,
      );
    }),
    { numRuns: 1500, seed: 22 },
  );
  assert.ok(wide > 300, `only ${wide} generated files granted beyond read-only`);
});

Deno.test("the audit never passes a file the Copilot CLI loads beyond read-only", () => {
  let wide = 0;
  fc.assert(
    fc.property(agentFile, (file) => {
      const text = file.replaceAll("Read", "read").replaceAll("Edit", "edit") + SECTION;
      const r = copilotCliReading(text);
      const beyond = r.uncertain !== undefined ||
        (r.agent && r.grant !== null &&
          beyondReadOnly(r.grant, (n) => classifyTool(copilotAlias(n))).length > 0);
      if (!beyond) return;
      wide++;
      const found = auditEntries([{ rel: ".github/agents/w.agent.md", state: "text", text }], {
        switchOn: true,
        frameworks: [],
      }).filter((f) => f.enforced && f.severity === "error");
      assert.ok(
        found.length > 0,
        `${JSON.stringify(text)}: ${r.how}: ${JSON.stringify(r.grant)}, yet the audit passes it`,
      );
    }),
    { numRuns: 1500, seed: 23 },
  );
  assert.ok(wide > 200, `only ${wide} generated files granted beyond read-only`);
});
