/**
 * The Copilot CLI host model (lib/audit/hosts/copilot.ts) against its corpus
 * (tests/testdata/hosts/copilot/): each file's sidecar records what Copilot CLI 1.0.102's own
 * native parser (`customAgentsParseMarkdown`) read from it; the model must read the same, and the
 * audit must never pass a file the CLI loads with a tool beyond read-only or every tool.
 */
import assert from "node:assert/strict";
import { auditEntries } from "../../lib/audit/team.ts";
import { copilotAlias } from "../../lib/audit/check_markdown.ts";
import { copilotCliReading } from "../../lib/audit/hosts/copilot.ts";
import { beyondReadOnly, type Grant } from "../../lib/audit/hosts/grant.ts";
import { classifyTool } from "../../lib/audit/tools.ts";
import { copilotCases, type RecordedReading } from "./_hosts.ts";

const CASES = copilotCases();
const HOST = "Copilot CLI 1.0.102";

function grantOf(r: RecordedReading): Grant {
  return r.tools === "*" || r.tools === undefined ? { all: true } : { all: false, names: r.tools };
}

Deno.test("the Copilot corpus has at least 30 files, each with the CLI's reading and its source", () => {
  assert.ok(CASES.length >= 30, `${CASES.length}`);
  for (const c of CASES) {
    assert.ok(c.readings[HOST] !== undefined && c.source[HOST] !== undefined, c.name);
  }
});

for (const c of CASES) {
  Deno.test(`host corpus copilot/${c.name}: the model reads it as the Copilot CLI does (${c.why})`, () => {
    const want = c.readings[HOST];
    const m = copilotCliReading(c.text);
    assert.equal(m.uncertain, undefined, m.uncertain);
    assert.equal(m.agent, want.agent, m.how);
    if (want.agent) assert.deepEqual(m.grant, grantOf(want), m.how);
  });

  Deno.test(`host corpus copilot/${c.name}: the audit is not clean where the CLI grants beyond read-only`, () => {
    const want = c.readings[HOST];
    if (!want.agent) return;
    const beyond = beyondReadOnly(grantOf(want), (n) => classifyTool(copilotAlias(n)));
    if (beyond.length === 0) return;
    const errors = auditEntries([{
      rel: `.github/agents/${c.name}.agent.md`,
      state: "text",
      text: c.text,
    }], { switchOn: true, frameworks: [] }).filter((f) => f.severity === "error" && f.enforced);
    assert.ok(errors.length > 0, `the CLI grants ${beyond.join(", ")}, yet the audit has no error`);
  });
}
