/**
 * The audit's SARIF: the whole corpus audited through the real CLI (`--format sarif`) validates
 * with Microsoft's SARIF validator (`Sarif.Multitool validate`, npm
 * `@microsoft/sarif-multitool-linux`) with no error or warning, and against the SARIF 2.1.0 JSON
 * Schema (tests/testdata/sarif/, with ajv from the tests' lockfile, formats checked: no Python
 * package is needed); rules and results carry what code
 * scanning needs; partial fingerprints are stable across runs and line moves. The JSON report
 * matches its committed schema (schemas/audit-findings.schema.json, no drift).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import multitool from "npm:@microsoft/sarif-multitool-linux@5.7.0/package.json" with {
  type: "json",
};
import { Ajv2020, type ValidateFunction } from "npm:ajv@8.20.0/dist/2020.js";
import addFormats from "npm:ajv-formats@3.0.1";
import { DENO, REPO_ROOT, runCli, sandbox } from "../_helpers/mod.ts";
import {
  auditJsonSchema,
  AuditReportSchema,
  auditSchemaFileText,
} from "../../lib/audit/report_schema.ts";
import { RULES } from "../../lib/audit/finding.ts";
import { corpus, corpusText, placeOf } from "./_corpus.ts";
import { switchBrief, withSandbox, writeFiles } from "./_team.ts";

interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: {
    physicalLocation: {
      artifactLocation: { uri: string; uriBaseId?: string };
      region: { startLine: number; startColumn: number };
    };
  }[];
  partialFingerprints: Record<string, string>;
}
interface SarifLog {
  version: string;
  runs: {
    tool: {
      driver: {
        rules: {
          id: string;
          shortDescription: { text: string };
          fullDescription: { text: string };
          help: { text: string };
        }[];
      };
    };
    results: SarifResult[];
  }[];
}

/** The SARIF 2.1.0 schema (tests/testdata/sarif/) compiled by ajv, formats checked. */
function sarifSchemaValidator(): ValidateFunction {
  const schema = JSON.parse(
    Deno.readTextFileSync(join(REPO_ROOT, "tests", "testdata", "sarif", "sarif-schema-2.1.0.json")),
  );
  // strict off: the schema uses annotations ajv's strict mode does not know; the checks are on.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

/** The schema's errors for `data`, as readable lines. */
function schemaErrors(validate: ValidateFunction, data: unknown): string[] {
  return validate(data)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`);
}

/** A team holding every corpus file where its host finds it (names kept apart by directory). */
function corpusTeam(project: string): void {
  const files: Record<string, string> = { "agentteams.jsonc": switchBrief() };
  for (const rel of Object.keys(corpus())) {
    const place = placeOf(rel);
    // AGENTS.md and .codex/config.toml are one per directory: give each its own.
    files[
      place.startsWith(".codex/agents/") || place.startsWith(".claude/") ||
        place.startsWith(".github/") || place.startsWith(".goose/")
        ? place
        : `${rel.split("/")[0]}/${place}`
    ] = corpusText(rel);
  }
  writeFiles(project, files);
}

async function corpusSarif(): Promise<{ text: string; dir: string; dispose: () => Promise<void> }> {
  const sb = await sandbox("audit-sarif");
  corpusTeam(sb.project);
  const r = await runCli(["audit", "--project", sb.project, "--format", "sarif"], {
    env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
  });
  assert.equal(r.code, 1, r.stderr);
  return { text: r.stdout, dir: sb.dir, dispose: sb.dispose };
}

/** The multitool's binary, copied out of Deno's npm cache and made executable. */
async function multitoolBinary(dir: string): Promise<string> {
  const info = await new Deno.Command(DENO, { args: ["info", "--json"], stdout: "piped" }).output();
  const npmCache = (JSON.parse(new TextDecoder().decode(info.stdout)) as { npmCache: string })
    .npmCache;
  const src = join(
    npmCache,
    "registry.npmjs.org",
    "@microsoft",
    "sarif-multitool-linux",
    multitool.version,
    "Sarif.Multitool",
  );
  const dst = join(dir, "Sarif.Multitool");
  await Deno.copyFile(src, dst);
  await Deno.chmod(dst, 0o700);
  return dst;
}

Deno.test("the corpus's SARIF validates with Microsoft's SARIF validator and the SARIF 2.1.0 schema", async () => {
  const s = await corpusSarif();
  try {
    const file = join(s.dir, "corpus.sarif");
    Deno.writeTextFileSync(file, s.text);
    const log = JSON.parse(s.text) as SarifLog;
    assert.equal(log.version, "2.1.0");
    const results = log.runs[0].results;
    assert.ok(results.length >= 100, `${results.length} results`);
    // Microsoft's validator: its own log lists every schema (JSON…) and rule (SARIF…) problem.
    const bin = await multitoolBinary(s.dir);
    const out = join(s.dir, "validation.sarif");
    const v = await new Deno.Command(bin, {
      args: ["validate", "-o", out, file],
      env: { HOME: s.dir, DOTNET_CLI_TELEMETRY_OPTOUT: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const console_ = new TextDecoder().decode(v.stdout) + new TextDecoder().decode(v.stderr);
    assert.equal(v.code, 0, console_);
    const validation = JSON.parse(Deno.readTextFileSync(out)) as SarifLog;
    const problems = validation.runs[0].results.map((r) => `${r.ruleId}: ${r.message.text}`);
    assert.deepEqual(problems, [], console_);
    // A log the validator must refuse proves it runs: a region without a start.
    const bad = join(s.dir, "bad.sarif");
    const broken = JSON.parse(s.text) as SarifLog;
    (broken.runs[0].results[0].locations[0].physicalLocation as { region: unknown }).region = {};
    Deno.writeTextFileSync(bad, JSON.stringify(broken));
    const badOut = join(s.dir, "bad-validation.sarif");
    await new Deno.Command(bin, {
      args: ["validate", "-o", badOut, bad],
      env: { HOME: s.dir },
      stdout: "null",
      stderr: "null",
    }).output();
    const badLog = JSON.parse(Deno.readTextFileSync(badOut)) as SarifLog;
    assert.ok(badLog.runs[0].results.some((r) => r.level === "error"), "the validator refuses");
    // The SARIF 2.1.0 JSON Schema, with ajv (draft 2020-12, formats checked).
    const validate = sarifSchemaValidator();
    assert.deepEqual(schemaErrors(validate, log), []);
    assert.ok(schemaErrors(validate, { ...log, version: "2.2.0" }).length > 0, "refuses 2.2.0");
    const mutated = (f: (l: SarifLog & Record<string, unknown>) => void) => {
      const l = JSON.parse(s.text);
      f(l);
      return schemaErrors(validate, l);
    };
    assert.ok(mutated((l) => (l.runs[0].results[0].level = "severe")).length > 0, "an enum");
    // Formats are checked: a driver's informationUri must be a URI.
    assert.ok(
      mutated((l) => {
        (l.runs[0].tool.driver as Record<string, unknown>).informationUri = "not a uri";
      }).some((e) => e.includes("format")),
      "a format",
    );
  } finally {
    await s.dispose();
  }
});

Deno.test("SARIF rules and results carry id, descriptions, help, level, region and a fingerprint", async () => {
  const s = await corpusSarif();
  try {
    const log = JSON.parse(s.text) as SarifLog;
    const rules = log.runs[0].tool.driver.rules;
    assert.deepEqual(rules.map((r) => r.id), Object.keys(RULES).sort());
    for (const r of rules) {
      assert.ok(r.shortDescription.text && r.fullDescription.text && r.help.text, r.id);
    }
    for (const res of log.runs[0].results) {
      assert.equal(rules[res.ruleIndex].id, res.ruleId);
      assert.ok(["error", "warning", "note"].includes(res.level));
      const loc = res.locations[0].physicalLocation;
      assert.ok(loc.region.startLine >= 1 && loc.region.startColumn >= 1);
      assert.equal(loc.artifactLocation.uriBaseId, "SRCROOT");
      assert.match(res.partialFingerprints["agentteamsFinding/v1"], /^[0-9a-f]{32}$/);
    }
    const fps = log.runs[0].results.map((r) => r.partialFingerprints["agentteamsFinding/v1"]);
    assert.equal(new Set(fps).size, fps.length, "fingerprints are unique");
  } finally {
    await s.dispose();
  }
});

Deno.test("partial fingerprints are stable across runs and when the finding's line moves", async () => {
  await withSandbox("audit-fp", async (sb) => {
    const agent = (pad: string) =>
      `---\nname: w\n${pad}description: d\ntools: Read, Edit\n---\n## Write Policy: Return Proposals, Never Write\n`;
    writeFiles(sb.project, {
      ".claude/agents/w.md": agent(""),
      "agentteams.jsonc": switchBrief(["claude"]),
    });
    const run = async () => {
      const r = await runCli(["audit", "--project", sb.project, "--format", "sarif"], {
        env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
      });
      const log = JSON.parse(r.stdout) as SarifLog;
      const w = log.runs[0].results.find((x) => x.ruleId === "TOOL_WRITE")!;
      return { line: w.locations[0].physicalLocation.region.startLine, fp: w.partialFingerprints };
    };
    const a = await run();
    const b = await run();
    assert.deepEqual(a, b);
    writeFiles(sb.project, { ".claude/agents/w.md": agent("# a comment\n# another\n") });
    const c = await run();
    assert.equal(c.line, a.line + 2);
    assert.deepEqual(c.fp, a.fp);
  });
});

Deno.test("schemas/audit-findings.schema.json equals auditSchemaFileText() (no drift); the JSON report fits it", async () => {
  const committed = Deno.readTextFileSync(join(REPO_ROOT, "schemas", "audit-findings.schema.json"));
  assert.equal(committed, auditSchemaFileText(), "schemas/audit-findings.schema.json drifted");
  assert.deepEqual(JSON.parse(committed), auditJsonSchema());
  const s = await runCli(["schema", "audit-findings"]);
  assert.equal(s.code, 0, s.stderr);
  assert.equal(s.stdout, auditSchemaFileText());
  await withSandbox("audit-json", async (sb) => {
    corpusTeam(sb.project);
    const r = await runCli(["audit", "--project", sb.project, "--format", "json"], {
      env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" },
    });
    const rep = AuditReportSchema.parse(JSON.parse(r.stdout));
    assert.equal(rep.ok, false);
    assert.ok(rep.findings.length > 100);
    assert.throws(() => AuditReportSchema.parse({ ...rep, extra: 1 }));
  });
});

Deno.test("an audit that finds no agent file writes a SARIF log that validates, its invocation unsuccessful under the switch", async () => {
  await withSandbox("audit-sarif-empty", async (sb) => {
    writeFiles(sb.project, { "agentteams.jsonc": switchBrief(), "src/a.txt": "x\n" });
    const run = async (extra: string[]) => {
      const r = await runCli(
        ["audit", "--project", sb.project, "--format", "sarif", ...extra, join(sb.project, "src")],
        { env: { ...sb.env, AGENTTEAMS_BROAD_OK: "1" } },
      );
      return { code: r.code, log: JSON.parse(r.stdout) };
    };
    const validate = sarifSchemaValidator();
    const failed = await run([]);
    assert.equal(failed.code, 1);
    assert.deepEqual(schemaErrors(validate, failed.log), []);
    const inv = failed.log.runs[0].invocations[0];
    assert.equal(inv.executionSuccessful, false);
    assert.match(inv.toolExecutionNotifications[0].message.text, /no agent files found/);
    const allowed = await run(["--allow-empty"]);
    assert.equal(allowed.code, 0);
    assert.deepEqual(schemaErrors(validate, allowed.log), []);
    assert.equal(allowed.log.runs[0].invocations[0].executionSuccessful, true);
  });
});
