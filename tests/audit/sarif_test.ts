/**
 * The audit's SARIF: the whole corpus audited through the real CLI (`--format sarif`) validates
 * with Microsoft's SARIF validator (`Sarif.Multitool validate`, npm
 * `@microsoft/sarif-multitool-linux`) with no error or warning, and against the SARIF 2.1.0 JSON
 * Schema (tests/testdata/sarif/, with CPython's jsonschema); rules and results carry what code
 * scanning needs; partial fingerprints are stable across runs and line moves. The JSON report
 * matches its committed schema (schemas/audit-findings.schema.json, no drift).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import multitool from "npm:@microsoft/sarif-multitool-linux@5.7.0/package.json" with {
  type: "json",
};
import { DENO, REPO_ROOT, runCli, sandbox } from "../_helpers/mod.ts";
import { auditJsonSchema, AuditReportSchema, auditSchemaFileText } from "../../lib/audit/report.ts";
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
    // The SARIF 2.1.0 JSON Schema, with CPython's jsonschema (formats checked).
    const schema = join(REPO_ROOT, "tests", "testdata", "sarif", "sarif-schema-2.1.0.json");
    const py = await new Deno.Command("python3", {
      args: [
        "-c",
        "import json,sys,jsonschema\n" +
        "s=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))\n" +
        "V=jsonschema.validators.validator_for(s)\n" +
        "errs=[e.message for e in V(s, format_checker=V.FORMAT_CHECKER).iter_errors(d)]\n" +
        "print(json.dumps(errs))",
        schema,
        file,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(py.code, 0, new TextDecoder().decode(py.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(py.stdout)), []);
    Deno.writeTextFileSync(bad, JSON.stringify({ ...log, version: "2.2.0" }));
    const pyBad = await new Deno.Command("python3", {
      args: [
        "-c",
        "import json,sys,jsonschema\n" +
        "s=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))\n" +
        "V=jsonschema.validators.validator_for(s)\n" +
        "print(len(list(V(s).iter_errors(d))))",
        schema,
        bad,
      ],
      stdout: "piped",
    }).output();
    assert.ok(Number(new TextDecoder().decode(pyBad.stdout)) > 0, "the schema refuses 2.2.0");
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
