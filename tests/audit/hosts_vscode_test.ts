/**
 * The VS Code host model (lib/audit/hosts/vscode.ts) against its corpus
 * (tests/testdata/hosts/vscode/): each file's sidecar records what VS Code 1.130.0's own
 * `PromptFileParser` (with its yaml.ts) read from it; the model must read the same or say it
 * can't tell, and the audit must never pass a file VS Code loads with a tool beyond read-only or
 * every tool — as a custom agent and as a legacy chat mode.
 */
import assert from "node:assert/strict";
import { auditEntries } from "../../lib/audit/team.ts";
import { copilotAlias } from "../../lib/audit/check_markdown.ts";
import { splitToolList, VSCODE_HOST, vscodeReading } from "../../lib/audit/hosts/vscode.ts";
import { beyondReadOnly, type Grant } from "../../lib/audit/hosts/grant.ts";
import { classifyTool } from "../../lib/audit/tools.ts";
import { type RecordedReading, vscodeCases } from "./_hosts.ts";
import fc from "../_helpers/fc.ts";
import { agentFile } from "./_fm_gen.ts";

const CASES = vscodeCases();

function grantOf(r: RecordedReading): Grant {
  return r.tools === "*" || r.tools === undefined ? { all: true } : { all: false, names: r.tools };
}

function errorsOf(rel: string, text: string) {
  return auditEntries([{ rel, state: "text", text }], { switchOn: true, frameworks: [] })
    .filter((f) => f.severity === "error" && f.enforced);
}

Deno.test("the VS Code corpus has at least 20 files, each with VS Code's reading and its source", () => {
  assert.ok(CASES.length >= 20, `${CASES.length}`);
  for (const c of CASES) {
    assert.ok(c.readings[VSCODE_HOST] !== undefined && c.source[VSCODE_HOST] !== undefined, c.name);
  }
});

Deno.test("the VS Code model is certain on most of the corpus", () => {
  const certain = CASES.filter((c) => vscodeReading(c.text).uncertain === undefined);
  assert.ok(certain.length >= 25, `${certain.length} of ${CASES.length}`);
});

for (const c of CASES) {
  Deno.test(`host corpus vscode/${c.name}: the model reads it as VS Code does or can't tell (${c.why})`, () => {
    const want = c.readings[VSCODE_HOST];
    const m = vscodeReading(c.text);
    assert.equal(m.agent, want.agent, m.how);
    if (m.uncertain !== undefined) return; // judged as not proven read-only, below
    assert.deepEqual(m.grant, grantOf(want), m.how);
  });

  for (
    const rel of [`.github/agents/${c.name}.agent.md`, `.github/chatmodes/${c.name}.chatmode.md`]
  ) {
    Deno.test(`host corpus vscode/${c.name}: the audit of ${rel} is not clean where VS Code grants beyond read-only`, () => {
      const beyond = beyondReadOnly(
        grantOf(c.readings[VSCODE_HOST]),
        (n) => classifyTool(copilotAlias(n)),
      );
      if (beyond.length === 0) return;
      const errors = errorsOf(rel, c.text);
      assert.ok(
        errors.length > 0,
        `VS Code grants ${beyond.join(", ")}, yet the audit has no error`,
      );
    });
  }
}

// Each divergence between the audit's strict reading and VS Code's. The strict checks already
// refuse these files, but on a chat mode no host reading named what VS Code grants: each test
// fails on the audit before the VS Code model.
const DIVERGE: [string, string, string][] = [
  ["a BOM: VS Code's parser finds no header, so every tool", "bom", "*"],
  ["quotes inside a comma string are stripped, so 'edit' is edit", "quoted-string", "edit"],
  ["tools: ~ is a tool named ~, not null", "tilde-tools", "~"],
  ["the first of two tools keys wins", "dup-tools", "edit"],
  ["a tools mapping is ignored, so every tool", "map-tools", "*"],
];

for (const [what, name, tool] of DIVERGE) {
  Deno.test(`vscode divergence: ${what} — the chat mode is FM_AMBIGUOUS naming VS Code's reading`, () => {
    const c = CASES.find((x) => x.name === name);
    assert.ok(c !== undefined, name);
    const g = vscodeReading(c.text).grant;
    assert.ok(
      g !== null && (tool === "*" ? g.all : !g.all && g.names.includes(tool)),
      JSON.stringify(g),
    );
    const amb = errorsOf(`.github/chatmodes/${name}.chatmode.md`, c.text)
      .find((f) => f.code === "FM_AMBIGUOUS");
    assert.ok(amb !== undefined, "no FM_AMBIGUOUS");
    assert.match(amb.message, /VS Code 1\.130\.0/);
  });
}

Deno.test("vscode: a chat mode with a clean read-only list stays clean", () => {
  const text =
    "---\ndescription: d\ntools: ['read', 'search']\n---\n\n## Write Policy: Return Proposals, Never Write\n";
  assert.deepEqual(errorsOf(".github/chatmodes/w.chatmode.md", text).map((f) => f.code), []);
});

Deno.test("vscode: the comma split strips quotes and drops empty parts", () => {
  assert.deepEqual(splitToolList(" read , 'edit',, \"x, y\" "), ["read", "edit", "x, y"]);
});

Deno.test("the audit never passes a chat mode or custom agent VS Code loads beyond read-only", () => {
  let wide = 0;
  fc.assert(
    fc.property(agentFile, fc.boolean(), (file, mode) => {
      const text = file.replaceAll("Read", "read").replaceAll("Edit", "edit") +
        "\n## Write Policy: Return Proposals, Never Write\n";
      const r = vscodeReading(text);
      const beyond = r.uncertain !== undefined ||
        (r.grant !== null &&
          beyondReadOnly(r.grant, (n) => classifyTool(copilotAlias(n))).length > 0);
      if (!beyond) return;
      wide++;
      const rel = mode ? ".github/chatmodes/w.chatmode.md" : ".github/agents/w.agent.md";
      const codes = errorsOf(rel, text).map((f) => f.code);
      assert.ok(
        codes.length > 0,
        `${JSON.stringify(text)} as ${rel}: VS Code ${r.how}: ${
          JSON.stringify(r.grant)
        }, yet the audit has no error`,
      );
    }),
    { numRuns: 1500, seed: 22 },
  );
  assert.ok(wide > 300, `only ${wide} generated files granted beyond read-only`);
});
