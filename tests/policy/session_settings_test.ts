/**
 * The session-sandbox settings check (issue 15, item 5), as a pure function: which rules count as
 * denying, what each missing one reports (its kind, file and exact line), and what makes a file
 * count for nothing (line and column, never a crash). The reader is tested at its edge: a
 * symlinked settings file is not followed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  sessionSettingsFindings,
  type SessionSettingsInput,
  type SettingsFinding,
  writeDenied,
} from "../../lib/policy/session_settings.ts";
import { readSessionSettings } from "../../lib/policy/session_settings_read.ts";
import { removeTree, tempDir } from "../_helpers/mod.ts";

const ROOT = "/w/proj";
const HOME = "/home/op";
const KEYS = "/home/op/.config/agentteams/keys";
const SECRETS = [`${KEYS}/proposal-ledger.key`, `${KEYS}/operator-ed25519.pem`];

/**
 * The eight rules, as doctor suggests them for this layout (the last three: the triad's trust roots,
 * the settings that decide them, and git's config, which names the programs git runs).
 */
const ALL = [
  "Read(~/.config/agentteams/keys/**)",
  "Read(./.agentteams/**)",
  "Edit(./.agentteams/**)",
  "Edit(./.agentteams-status/**)",
  "Edit(./references/**)",
  "Edit(./.claude/**)",
  "Edit(./.git/config)",
  "Edit(./.mcp.json)",
  // Every name the brief is found under, whichever is in use (a second brief stops every act).
  "Edit(./agentteams.jsonc)",
  "Edit(./agentteams.json)",
];

/** The trust roots' write rules in {@link ALL}: each must bind Bash too. */
const TRUST_EDITS = ALL.slice(3);

function input(
  files: Record<string, string>,
  over: Partial<SessionSettingsInput> = {},
): SessionSettingsInput {
  return {
    root: ROOT,
    settings: Object.entries(files).map(([rel, text]) => ({ path: `${ROOT}/${rel}`, text })),
    keyDir: KEYS,
    secretFiles: SECRETS,
    homeDir: HOME,
    usesClaude: true,
    trustRoots: true,
    ...over,
  };
}

/** Claude's sandbox as doctor asks for it with the trust roots (probe 22c C6). */
const SANDBOX = { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false };

/** A settings file with `deny`, `extra`, and {@link SANDBOX} under `extra`'s own sandbox keys. */
function denyFile(deny: readonly string[], extra: Record<string, unknown> = {}): string {
  const sandbox = { ...SANDBOX, ...(extra.sandbox as Record<string, unknown> | undefined) };
  return JSON.stringify({ permissions: { deny }, ...extra, sandbox }, null, 2);
}

function findings(deny: readonly string[], extra: Record<string, unknown> = {}): SettingsFinding[] {
  return sessionSettingsFindings(input({ ".claude/settings.json": denyFile(deny, extra) }));
}

function missing(f: readonly SettingsFinding[]): (string | null)[] {
  return f.filter((x) => x.code === "SETTINGS_RULE_MISSING").map((x) => x.rule);
}

Deno.test("session settings: all eight rules, no finding; each one left out in turn is named alone", () => {
  assert.deepEqual(findings(ALL), []);
  for (const rule of ALL) {
    const f = findings(ALL.filter((r) => r !== rule));
    assert.equal(f.length, 1, JSON.stringify(f));
    assert.equal(f[0].code, "SETTINGS_RULE_MISSING");
    assert.equal(f[0].rule, rule);
    assert.equal(f[0].kind, rule.startsWith("Read") ? "read-deny" : "write-deny");
    assert.equal(f[0].file, ".claude/settings.json");
    assert.equal(f[0].add, JSON.stringify(rule));
    assert.equal(f[0].position, null);
    assert.ok(f[0].message.includes(rule), f[0].message);
  }
});

Deno.test("session settings: rules merge across settings.json and settings.local.json", () => {
  const f = sessionSettingsFindings(input({
    ".claude/settings.json": denyFile(ALL.slice(1)),
    ".claude/settings.local.json": denyFile(ALL.slice(0, 1)),
  }));
  assert.deepEqual(f, []);
});

Deno.test("session settings: equivalent path forms and broader rules count", () => {
  const equivalents: string[][] = [
    // Absolute, and relative without ./, and settings-root-relative (/path).
    [
      `Read(/${KEYS}/**)`,
      `Read(/${ROOT}/.agentteams/**)`,
      "Read(.agentteams-queue/**)",
      "Edit(/.agentteams/**)",
      "Edit(.agentteams-status/**)",
      "Edit(/references/**)",
      "Edit(.claude/**)",
      "Edit(/.git/config)",
      "Edit(.mcp.json)",
      "Edit(/agentteams.jsonc)",
      `Edit(/${ROOT}/agentteams.json)`,
    ],
    // Broader: a parent, one pattern over several directories, a `**/` prefix (the runner's
    // own rules), and parents for the trust roots.
    [
      "Read(~/.config/agentteams/**)",
      "Read(./.agentteams*/**)",
      "Edit(**/.agentteams/**)",
      "Edit(./.agentteams-status/**)",
      "Edit(./references/**)",
      "Edit(./.claude/**)",
      "Edit(./.git/**)",
      "Edit(./.mcp.json)",
      "Edit(./agentteams.jsonc)",
      "Edit(./agentteams.json)",
    ],
    // Each secret file by name, and a bare Edit for the runner's own write rule.
    [
      `Read(~/.config/agentteams/keys/proposal-ledger.key)`,
      `Read(//${KEYS.slice(1)}/operator-ed25519.pem)`,
      "Read(./.agentteams/**)",
      "Edit",
      ...TRUST_EDITS,
    ],
  ];
  for (const deny of equivalents) assert.deepEqual(findings(deny), [], deny.join(" "));
});

Deno.test("session settings: a trust root's rule must bind Bash through Claude's sandbox: a bare tool or a write pattern binds the file tools only, and is named as such", () => {
  // Each pattern or bare form over a trust root: it covers the path for Claude's file tools,
  // but the sandbox skips it for Bash (a write path still a pattern after a trailing /**, on
  // Linux; a rule with no path, always).
  const cases: [string, string][] = [
    ["Edit(./.agentteams-s?atus/**)", "Edit(./.agentteams-status/**)"],
    ["Edit(./refer*/**)", "Edit(./references/**)"],
    ["Edit(./.cl?ude/**)", "Edit(./.claude/**)"],
    ["Edit(./.git/c*)", "Edit(./.git/config)"],
    ["Edit(./references/**/*)", "Edit(./references/**)"],
  ];
  for (const [weak, rule] of cases) {
    const f = findings([...ALL.filter((r) => r !== rule), weak]);
    assert.deepEqual(missing(f), [rule], weak);
    assert.equal(f[0].trustRoot, true, weak);
    assert.match(f[0].message, /denies Claude's file tools only/, weak);
  }
  // A bare Read or Edit denies every path to the file tools, and nothing to Bash.
  const bare = findings(["Read", "Edit"]);
  assert.deepEqual(missing(bare), [
    "Read(~/.config/agentteams/keys/**)",
    ...TRUST_EDITS,
  ]);
  // Without the trust roots' rules (the audit's check), the forms count as before.
  assert.deepEqual(
    sessionSettingsFindings(input({ ".claude/settings.json": denyFile(["Read", "Edit"]) }, {
      trustRoots: false,
    })),
    [],
  );
});

Deno.test("session settings: weaker or unreadable rules do not count (strict)", () => {
  const weaker: [string, string][] = [
    // A bare directory name: Claude's docs do not say it covers the files.
    ["Read(./.agentteams)", "Read(./.agentteams/**)"],
    ["Read(./.agentteams/)", "Read(./.agentteams/**)"],
    // One level only.
    ["Read(./.agentteams/*)", "Read(./.agentteams/**)"],
    // A parent segment, a negation, an escape.
    ["Read(./src/../.agentteams/**)", "Read(./.agentteams/**)"],
    ["Read(!./.agentteams/**)", "Read(./.agentteams/**)"],
    ["Read(./\\.agentteams/**)", "Read(./.agentteams/**)"],
    // The wrong tool, or the wrong case.
    ["Edit(./.agentteams/**)", "Read(./.agentteams/**)"],
    ["Read(./.AgentTeams/**)", "Read(./.agentteams/**)"],
    // Only one of the two secret files.
    ["Read(~/.config/agentteams/keys/proposal-ledger.key)", "Read(~/.config/agentteams/keys/**)"],
    // Another home.
    ["Read(//home/other/.config/agentteams/keys/**)", "Read(~/.config/agentteams/keys/**)"],
  ];
  for (const [rule, needed] of weaker) {
    const deny = [...ALL.filter((r) => r !== needed), rule];
    assert.deepEqual(missing(findings(deny)), [needed], rule);
  }
});

Deno.test("session settings: a Write(...) rule is reported where it is, and the Edit rule is still missing", () => {
  const deny = [...ALL.filter((r) => r !== "Edit(./.agentteams-status/**)")];
  deny.push("Write(./.agentteams-status/**)");
  const f = findings(deny);
  assert.deepEqual(missing(f), ["Edit(./.agentteams-status/**)"]);
  const w = f.find((x) => x.code === "SETTINGS_WRITE_RULE");
  assert.ok(w, JSON.stringify(f));
  // denyFile indents by two: the deny list's items start on line 4 at column 7.
  assert.deepEqual(w.position, { line: 4 + deny.length - 1, column: 7 });
  assert.match(w.message, /Write\(\.\/\.agentteams-status\/\*\*\) denies nothing/);
});

Deno.test("session settings: malformed, JSONC and misshapen files count for nothing, with line and column", () => {
  const cases: [string, RegExp, { line: number; column: number }][] = [
    ['{\n  "permissions": {\n    "deny": ["Read(./.agentteams/**)",, ]\n  }\n}', /not valid JSON/, {
      line: 3,
      column: 39,
    }],
    ['{\n  // the team rules\n  "permissions": {"deny": []}\n}', /comments or trailing commas/, {
      line: 2,
      column: 3,
    }],
    ['{"permissions": {"deny": "Read(./.agentteams/**)"}}', /"permissions\.deny" is not an array/, {
      line: 1,
      column: 26,
    }],
    ['{\n"permissions": []}', /"permissions" is not an object/, { line: 2, column: 16 }],
    ['{"permissions": {"deny": [1]}}', /"permissions\.deny\[0\]" is not a string/, {
      line: 1,
      column: 27,
    }],
    ["[]", /not a JSON object/, { line: 1, column: 1 }],
    ['{"permissions": {"deny": []}, "permissions": {}}', /not valid JSON/, { line: 1, column: 31 }],
  ];
  for (const [text, re, position] of cases) {
    const f = sessionSettingsFindings(input({
      ".claude/settings.json": text,
      ".claude/settings.local.json": denyFile(ALL.slice(1)),
    }));
    const bad = f.filter((x) => x.file === ".claude/settings.json" && x.position !== null);
    assert.equal(bad.length, 1, `${text}: ${JSON.stringify(f)}`);
    assert.match(bad[0].message, re);
    assert.deepEqual(bad[0].position, position, text);
    assert.ok(bad[0].message.startsWith(`.claude/settings.json:${position.line}:`));
    // Its rules do not count: the key rule (which the local file lacks) is still missing.
    assert.deepEqual(missing(f), [ALL[0]], text);
  }
  // A file that could not be read at all (a symlink, say).
  const f = sessionSettingsFindings({
    ...input({}),
    settings: [{ path: `${ROOT}/.claude/settings.json`, text: null, unreadable: "is refused" }],
  });
  assert.equal(f[0].code, "SETTINGS_UNREADABLE");
  assert.equal(missing(f).length, ALL.length);
});

Deno.test("session settings: no settings at all is a warning of its own; a team without Claude has none", () => {
  const none = sessionSettingsFindings(input({}));
  assert.equal(none[0].code, "SETTINGS_NONE");
  assert.deepEqual(missing(none), ALL);
  assert.deepEqual(sessionSettingsFindings(input({}, { usesClaude: false })), []);
});

Deno.test("session settings: a key dir outside HOME gets an absolute rule for the local file", () => {
  const f = sessionSettingsFindings(input({ ".claude/settings.json": denyFile(ALL.slice(1)) }, {
    keyDir: "/srv/keys",
    secretFiles: ["/srv/keys/proposal-ledger.key"],
  }));
  assert.equal(f.length, 1);
  assert.equal(f[0].rule, "Read(//srv/keys/**)");
  assert.equal(f[0].file, ".claude/settings.local.json");
  assert.equal(f[0].add, '"Read(//srv/keys/**)"');
});

Deno.test("session settings: allow rules and sandbox entries over a denied path are reported", () => {
  const reopen = (extra: Record<string, unknown>) =>
    findings(ALL, extra).filter((x) => x.code === "SETTINGS_REOPENED");
  const allow = reopen({});
  assert.equal(allow.length, 0);
  const text = JSON.stringify(
    {
      permissions: { deny: ALL, allow: ["Read(./.agentteams/head)", "Read(./src/**)", "Read"] },
      sandbox: SANDBOX,
    },
    null,
    2,
  );
  const f = sessionSettingsFindings(input({ ".claude/settings.json": text }));
  assert.equal(f.length, 1, JSON.stringify(f));
  assert.equal(f[0].code, "SETTINGS_REOPENED");
  assert.equal(f[0].rule, "Read(./.agentteams/**)");
  assert.match(f[0].message, /permissions\.allow entry "\.\/\.agentteams\/head"/);
  assert.equal(f[0].position?.line, 16);
  // The sandbox: an allowRead inside the key dir re-opens it; one above a denied dir does not.
  const sb = reopen({
    sandbox: { filesystem: { allowRead: ["~/.config/agentteams/keys", "."] } },
  });
  assert.equal(sb.length, 1, JSON.stringify(sb));
  assert.equal(sb[0].rule, ALL[0]);
  assert.match(sb[0].message, /sandbox\.filesystem\.allowRead .* re-opens the path/);
  const w = reopen({ sandbox: { filesystem: { allowWrite: ["./.agentteams-status"] } } });
  assert.deepEqual(w.map((x) => x.rule), ["Edit(./.agentteams-status/**)"]);
  // The sandbox runtime's allowGitConfig lets Bash write .git/config: a trust root re-opened.
  const g = reopen({ sandbox: { filesystem: { allowGitConfig: true } } });
  assert.deepEqual(g.map((x) => [x.rule, x.trustRoot]), [["Edit(./.git/config)", true]]);
  assert.match(g[0].message, /sandbox\.filesystem\.allowGitConfig entry "\.\/\.git\/config"/);
  assert.deepEqual(reopen({ sandbox: { filesystem: { allowGitConfig: false } } }), []);
});

Deno.test("session settings reader: regular files only; a symlinked settings file is not followed", async () => {
  const dir = await tempDir("settings-read");
  try {
    assert.deepEqual(await readSessionSettings(dir), { claudeDir: false, settings: [] });
    await Deno.mkdir(join(dir, ".claude"));
    await Deno.writeTextFile(join(dir, "secret.key"), "SECRET-KEY-BYTES");
    await Deno.symlink(join(dir, "secret.key"), join(dir, ".claude", "settings.json"));
    await Deno.writeTextFile(join(dir, ".claude", "settings.local.json"), "{}");
    const r = await readSessionSettings(dir);
    assert.equal(r.claudeDir, true);
    assert.equal(r.settings.length, 2);
    assert.equal(r.settings[0].text, null);
    assert.match(r.settings[0].unreadable ?? "", /SYMLINK/);
    assert.equal(r.settings[1].text, "{}");
    const f = sessionSettingsFindings({ ...input({}), root: dir, settings: r.settings });
    assert.ok(!JSON.stringify(f).includes("SECRET-KEY-BYTES"));
    assert.equal(f[0].code, "SETTINGS_UNREADABLE");
  } finally {
    await removeTree(dir);
  }
});

Deno.test("session settings: the root's and HOME's own pattern characters are not patterns", () => {
  const root = "/w/a[1]*?";
  const home = "/home/o[p]";
  const keys = `${home}/.config/agentteams/keys`;
  const over = { root, homeDir: home, keyDir: keys, secretFiles: [`${keys}/proposal-ledger.key`] };
  const text = denyFile(ALL);
  const at = (r: string) => [{ path: `${r}/.claude/settings.json`, text }];
  assert.deepEqual(sessionSettingsFindings({ ...input({}), ...over, settings: at(root) }), []);
  const allowed = JSON.stringify(
    { permissions: { deny: ALL, allow: ["Read(./.agentteams/head)"] }, sandbox: SANDBOX },
    null,
    2,
  );
  const f = sessionSettingsFindings({
    ...input({}),
    ...over,
    settings: [{ path: `${root}/.claude/settings.json`, text: allowed }],
  });
  assert.deepEqual(f.map((x) => x.code), ["SETTINGS_REOPENED"]);
});

Deno.test("session settings: with no secret file named, the whole key dir must be denied", () => {
  const deny = [...ALL.slice(1), `Read(~/.config/agentteams/keys/proposal-ledger.key)`];
  const f = sessionSettingsFindings(
    input({ ".claude/settings.json": denyFile(deny) }, { secretFiles: [] }),
  );
  assert.deepEqual(missing(f), [ALL[0]]);
  const ok = sessionSettingsFindings(
    input({ ".claude/settings.json": denyFile(ALL) }, { secretFiles: [] }),
  );
  assert.deepEqual(ok, []);
});

/** {@link ALL} without the rules of the brief's names. */
const NO_BRIEF_RULES = ALL.filter((r) => !r.startsWith("Edit(./agentteams."));

Deno.test("session settings: the brief is a trust root: its Edit rule is asked for inside the project only", () => {
  const brief = `${ROOT}/agentteams.jsonc`;
  const f = sessionSettingsFindings(
    input({ ".claude/settings.json": denyFile([...NO_BRIEF_RULES, "Edit(./agentteams.json)"]) }, {
      brief,
    }),
  );
  assert.deepEqual(missing(f), ["Edit(./agentteams.jsonc)"]);
  assert.equal(f[0].add, '"Edit(./agentteams.jsonc)"');
  assert.match(f[0].message, /writing the brief agentteams\.jsonc \(a trust root/);
  assert.deepEqual(
    sessionSettingsFindings(input({ ".claude/settings.json": denyFile(ALL) }, { brief })),
    [],
  );
  // A brief elsewhere in the project: its own rule, and both default names still.
  const elsewhere = sessionSettingsFindings(
    input({ ".claude/settings.json": denyFile(NO_BRIEF_RULES) }, {
      brief: `${ROOT}/config/team.jsonc`,
    }),
  );
  assert.deepEqual(missing(elsewhere), [
    "Edit(./config/team.jsonc)",
    "Edit(./agentteams.jsonc)",
    "Edit(./agentteams.json)",
  ]);
  // A brief outside the project (no session starts there) is not asked about; the default
  // names are (a session could plant one, for every command run without --brief).
  assert.deepEqual(
    missing(sessionSettingsFindings(input({ ".claude/settings.json": denyFile(NO_BRIEF_RULES) }, {
      brief: "/srv/briefs/team.jsonc",
    }))),
    ["Edit(./agentteams.jsonc)", "Edit(./agentteams.json)"],
  );
});

Deno.test("session settings: denying only the brief in use leaves the other name a session could plant (a second brief stops every act): an error naming its line", () => {
  for (
    const [inUse, other] of [["agentteams.jsonc", "agentteams.json"], [
      "agentteams.json",
      "agentteams.jsonc",
    ]]
  ) {
    const f = sessionSettingsFindings(
      input({ ".claude/settings.json": denyFile([...NO_BRIEF_RULES, `Edit(./${inUse})`]) }, {
        brief: `${ROOT}/${inUse}`,
      }),
    );
    assert.deepEqual(missing(f), [`Edit(./${other})`], inUse);
    assert.equal(f[0].trustRoot, true, "an error, as every trust root's");
    assert.equal(f[0].add, JSON.stringify(`Edit(./${other})`));
    assert.match(f[0].message, /a name the brief is found under/);
  }
});

Deno.test("writeDenied: an Edit deny rule over the path (or its directory) denies writing it; Read, Write or a sibling does not", () => {
  const at = (deny: readonly string[]) => ({
    root: ROOT,
    homeDir: HOME,
    settings: [{ path: `${ROOT}/.claude/settings.json`, text: denyFile(deny) }],
  });
  const roster = `${ROOT}/references/security-approvers.txt`;
  const keys = `${ROOT}/references/authorized-verify-keys`;
  assert.equal(writeDenied(at(["Edit(./references/**)"]), roster, false), true);
  assert.equal(writeDenied(at(["Edit(./references/**)"]), keys, true), true);
  assert.equal(writeDenied(at(["Edit(./references/security-approvers.txt)"]), roster, false), true);
  assert.equal(writeDenied(at(["Edit(./references/security-approvers.txt)"]), keys, true), false);
  assert.equal(writeDenied(at(["Write(./references/**)"]), roster, false), false);
  assert.equal(writeDenied(at(["Read(./references/**)"]), roster, false), false);
  assert.equal(writeDenied(at(["Edit(./references)"]), keys, true), false);
  // Claude's sandbox does not hold Bash to a bare Edit, nor (on Linux) to a write pattern.
  assert.equal(writeDenied(at(["Edit"]), keys, true), false);
  assert.equal(writeDenied(at(["Edit(./refer*/**)"]), keys, true), false);
  assert.equal(writeDenied(at(["Edit(./references/**/*)"]), keys, true), false);
  // A file Claude Code would ignore denies nothing.
  assert.equal(
    writeDenied(
      {
        root: ROOT,
        homeDir: HOME,
        settings: [{
          path: `${ROOT}/.claude/settings.json`,
          text: '{"permissions": {"deny": ["Edit"]},}',
        }],
      },
      keys,
      true,
    ),
    false,
  );
});

Deno.test("session settings: the trust roots' rules are asked for only where the caller asks (doctor and serve), not by default", () => {
  const five = ALL.slice(0, 4);
  assert.deepEqual(
    sessionSettingsFindings(input({ ".claude/settings.json": denyFile(five) }, {
      trustRoots: false,
    })),
    [],
  );
  assert.deepEqual(
    missing(sessionSettingsFindings(input({ ".claude/settings.json": denyFile(five) }))),
    [
      "Edit(./references/**)",
      "Edit(./.claude/**)",
      "Edit(./.git/config)",
      "Edit(./.mcp.json)",
      "Edit(./agentteams.jsonc)",
      "Edit(./agentteams.json)",
    ],
  );
});

Deno.test("session settings: a trust root's missing rule, or a sandbox entry re-opening one, is marked trustRoot (doctor's error); the runner's own rules and allow rules are not", () => {
  const brief = `${ROOT}/agentteams.jsonc`;
  const f = sessionSettingsFindings(input({ ".claude/settings.json": denyFile([]) }, { brief }));
  const marked = f.filter((x) => x.trustRoot === true).map((x) => x.rule);
  assert.deepEqual(marked, [
    // The key dir's too, with the trust roots' rules (probe 22c "Noticed").
    "Read(~/.config/agentteams/keys/**)",
    "Edit(./.agentteams-status/**)",
    "Edit(./references/**)",
    "Edit(./.claude/**)",
    "Edit(./.git/config)",
    "Edit(./.mcp.json)",
    "Edit(./agentteams.jsonc)",
    "Edit(./agentteams.json)",
  ]);
  assert.ok(f.some((x) => x.rule === "Read(./.agentteams/**)" && x.trustRoot === undefined));
  const reopened = sessionSettingsFindings(input({
    ".claude/settings.json": denyFile([...ALL, "Edit(./agentteams.jsonc)"], {
      permissions: {
        deny: [...ALL, "Edit(./agentteams.jsonc)"],
        allow: ["Edit(./references/notes.md)"],
      },
      sandbox: { filesystem: { allowWrite: ["./references/authorized-verify-keys"] } },
    }),
  }, { brief }));
  assert.deepEqual(
    reopened.map((x) => [x.code, x.trustRoot ?? false]),
    [["SETTINGS_REOPENED", false], ["SETTINGS_REOPENED", true]],
  );
});

Deno.test("writeDenied: a sandbox allowWrite entry overlapping the path (or unreadable) re-opens it to sandboxed commands; one elsewhere does not", () => {
  const at = (allowWrite: readonly string[]) => ({
    root: ROOT,
    homeDir: HOME,
    settings: [{
      path: `${ROOT}/.claude/settings.json`,
      text: denyFile(["Edit(./references/**)"], { sandbox: { filesystem: { allowWrite } } }),
    }],
  });
  const keys = `${ROOT}/references/authorized-verify-keys`;
  assert.equal(writeDenied(at([]), keys, true), true);
  assert.equal(writeDenied(at(["./src"]), keys, true), true);
  assert.equal(
    writeDenied(at(["./references/authorized-verify-keys/k.pub.pem"]), keys, true),
    false,
  );
  assert.equal(writeDenied(at(["./references"]), keys, true), false);
  assert.equal(writeDenied(at(["**/authorized-verify-keys"]), keys, true), false);
  assert.equal(writeDenied(at(["../x"]), keys, true), false);
  // Without Claude's sandbox holding Bash to the rule (any value missing or weakened, a command
  // excluded), a session's shell writes the path all the same (probe 22c C6).
  const bash = (sandbox: Record<string, unknown> | null) => ({
    root: ROOT,
    homeDir: HOME,
    settings: [{
      path: `${ROOT}/.claude/settings.json`,
      text: JSON.stringify({
        permissions: { deny: ["Edit(./references/**)"] },
        ...(sandbox === null ? {} : { sandbox }),
      }),
    }],
  });
  assert.equal(writeDenied(bash(SANDBOX), keys, true), true);
  assert.equal(writeDenied(bash(null), keys, true), false);
  assert.equal(writeDenied(bash({ ...SANDBOX, enabled: false }), keys, true), false);
  assert.equal(writeDenied(bash({ ...SANDBOX, failIfUnavailable: false }), keys, true), false);
  assert.equal(
    writeDenied(bash({ ...SANDBOX, allowUnsandboxedCommands: true }), keys, true),
    false,
  );
  assert.equal(writeDenied(bash({ ...SANDBOX, excludedCommands: ["sed"] }), keys, true), false);
});

Deno.test("session settings: plugins, marketplaces and additional directories load agents from elsewhere (SETTINGS_EXTRA_AGENTS, at their line); false plugins and empty lists do not", () => {
  const codes = (extra: Record<string, unknown>) =>
    findings(ALL, extra).filter((f) => f.code === "SETTINGS_EXTRA_AGENTS").map((f) =>
      f.message.split(": ")[1].split(" ")[0]
    );
  assert.deepEqual(codes({ enabledPlugins: { "w@m": true } }), ['"enabledPlugins"']);
  assert.deepEqual(codes({ enabledPlugins: { "w@m": ["1.0.0"] } }), ['"enabledPlugins"']);
  assert.deepEqual(codes({ enabledPlugins: { "w@m": false } }), []);
  assert.deepEqual(
    codes({ extraKnownMarketplaces: { m: { source: { source: "directory", path: "." } } } }),
    [
      '"extraKnownMarketplaces"',
    ],
  );
  assert.deepEqual(codes({ extraKnownMarketplaces: {} }), []);
  const f = sessionSettingsFindings(input({
    ".claude/settings.json": JSON.stringify({
      permissions: { deny: ALL, additionalDirectories: ["../other"] },
      sandbox: SANDBOX,
    }),
  }));
  assert.deepEqual(f.map((x) => x.code), ["SETTINGS_EXTRA_AGENTS"]);
  assert.match(f[0].message, /"permissions\.additionalDirectories" adds working directories/);
  assert.equal(f[0].trustRoot, undefined);
});

Deno.test("session settings, Claude's sandbox (probe 22c C6): each value resolved as Claude Code merges the files (the later file wins a scalar; excludedCommands from any file), each missing or weakened one a trust-root finding naming the file, its line and the value to set", () => {
  const sandboxOf = (files: Record<string, Record<string, unknown> | null>) =>
    sessionSettingsFindings(input(Object.fromEntries(
      Object.entries(files).map(([rel, sandbox]) => [
        rel,
        JSON.stringify(
          {
            permissions: { deny: rel.endsWith("local.json") ? [] : ALL },
            ...(sandbox === null ? {} : { sandbox }),
          },
          null,
          2,
        ),
      ]),
    ))).filter((f) => f.code === "SETTINGS_SANDBOX");
  const SHARED = ".claude/settings.json";
  const LOCAL = ".claude/settings.local.json";
  assert.deepEqual(sandboxOf({ [SHARED]: SANDBOX }), []);
  // Absent: each value named, in the shared file, with the JSON to add.
  const none = sandboxOf({ [SHARED]: null });
  assert.deepEqual(none.map((f) => [f.sandbox, f.file, f.position, f.add, f.trustRoot]), [
    [{ key: "enabled", value: true }, SHARED, null, '"enabled": true', true],
    [{ key: "failIfUnavailable", value: true }, SHARED, null, '"failIfUnavailable": true', true],
    [
      { key: "allowUnsandboxedCommands", value: false },
      SHARED,
      null,
      '"allowUnsandboxedCommands": false',
      true,
    ],
  ]);
  assert.match(none[0].message, /add "sandbox": \{"enabled": true\} to \.claude\/settings\.json$/);
  // The wrong way, at its line.
  const off = sandboxOf({ [SHARED]: { ...SANDBOX, failIfUnavailable: false } });
  assert.equal(off.length, 1);
  assert.deepEqual([off[0].file, off[0].position], [SHARED, { line: 18, column: 26 }]);
  assert.match(
    off[0].message,
    /^\.claude\/settings\.json:18:26: "sandbox\.failIfUnavailable" is false/,
  );
  // Right in the shared file, overridden in the local one: the local one is named.
  const over = sandboxOf({ [SHARED]: SANDBOX, [LOCAL]: { allowUnsandboxedCommands: true } });
  assert.deepEqual(over.map((f) => [f.file, f.sandbox?.key]), [[
    LOCAL,
    "allowUnsandboxedCommands",
  ]]);
  assert.match(over[0].message, /overrides \.claude\/settings\.json, which sets false/);
  // The weaker nested sandbox: absent is Claude Code's default (off), which holds; on, in
  // either file, is named; off in the local file over on in the shared one holds.
  const weak = sandboxOf({ [SHARED]: { ...SANDBOX, enableWeakerNestedSandbox: true } });
  assert.deepEqual(weak.map((f) => [f.file, f.sandbox, f.add]), [
    [
      SHARED,
      { key: "enableWeakerNestedSandbox", value: false },
      '"enableWeakerNestedSandbox": false',
    ],
  ]);
  assert.match(weak[0].message, /"sandbox\.enableWeakerNestedSandbox" is true/);
  assert.deepEqual(
    sandboxOf({
      [SHARED]: { ...SANDBOX, enableWeakerNestedSandbox: true },
      [LOCAL]: { enableWeakerNestedSandbox: false },
    }),
    [],
  );
  // Wrong in the shared file, right in the local one: the local one wins.
  assert.deepEqual(
    sandboxOf({ [SHARED]: { ...SANDBOX, enabled: false }, [LOCAL]: { enabled: true } }),
    [],
  );
  // excludedCommands: empty is nothing; non-empty in either file is named there (an empty list
  // in the other does not clear it: the arrays concatenate).
  assert.deepEqual(sandboxOf({ [SHARED]: { ...SANDBOX, excludedCommands: [] } }), []);
  const ex = sandboxOf({
    [SHARED]: { ...SANDBOX, excludedCommands: [] },
    [LOCAL]: { excludedCommands: ["git"] },
  });
  assert.deepEqual(ex.map((f) => [f.file, f.sandbox, f.add, f.trustRoot]), [
    [LOCAL, { key: "excludedCommands", value: null }, null, true],
  ]);
  assert.match(ex[0].message, /remove "excludedCommands" from \.claude\/settings\.local\.json$/);
  // Not asked without the trust roots (the audit's input).
  assert.deepEqual(
    sessionSettingsFindings(input({ [SHARED]: JSON.stringify({ permissions: { deny: ALL } }) }, {
      trustRoots: false,
    })),
    [],
  );
});

Deno.test("session settings: a sandbox key of the wrong type makes the file count for nothing (Claude's schema drops it); with the trust roots a file the check cannot read is an error", () => {
  for (
    const [sandbox, what] of [
      ["on", '"sandbox" is not an object'],
      [{ enabled: "true" }, '"sandbox.enabled" is not true or false'],
      [
        { allowUnsandboxedCommands: null },
        '"sandbox.allowUnsandboxedCommands" is not true or false',
      ],
      [{ excludedCommands: "git" }, '"sandbox.excludedCommands" is not an array of strings'],
      [{ excludedCommands: [1] }, '"sandbox.excludedCommands" is not an array of strings'],
    ] as const
  ) {
    const f = sessionSettingsFindings(input({
      ".claude/settings.json": JSON.stringify({ permissions: { deny: ALL }, sandbox }),
    }));
    assert.equal(f[0].code, "SETTINGS_SHAPE", JSON.stringify(f[0]));
    assert.ok(f[0].message.includes(what), f[0].message);
    assert.equal(f[0].trustRoot, true);
    // Its rules count for nothing: every one is missing.
    assert.equal(missing(f).length, ALL.length);
  }
  const unread = sessionSettingsFindings({
    ...input({}),
    settings: [{ path: `${ROOT}/.claude/settings.json`, text: null, unreadable: "is a symlink" }],
  });
  assert.deepEqual([unread[0].code, unread[0].trustRoot], ["SETTINGS_UNREADABLE", true]);
  const loose = sessionSettingsFindings({
    ...input({}, { trustRoots: false }),
    settings: [{ path: `${ROOT}/.claude/settings.json`, text: null, unreadable: "is a symlink" }],
  });
  assert.equal(loose[0].trustRoot, undefined);
});

Deno.test("session settings: the user's and the managed files merge around the project's (user < project < local < managed); they only weaken: their deny rules do not count", () => {
  const host = (scope: "user" | "managed", v: unknown) => ({
    path: scope === "user"
      ? "/home/op/.claude/settings.json"
      : "/etc/claude-code/managed-settings.json",
    text: JSON.stringify(v),
    scope,
  });
  const project = { path: `${ROOT}/.claude/settings.json`, text: denyFile(ALL) };
  const check = (settings: SessionSettingsInput["settings"]) =>
    sessionSettingsFindings({ ...input({}), settings });
  assert.deepEqual(check([project]), []);
  // The project's value wins over the user's; the managed one over the project's.
  assert.deepEqual(check([host("user", { sandbox: { enabled: false } }), project]), []);
  const managed = check([project, host("managed", { sandbox: { enabled: false } })]);
  assert.deepEqual(managed.map((f) => [f.code, f.file, f.trustRoot]), [
    ["SETTINGS_SANDBOX", "/etc/claude-code/managed-settings.json", true],
  ]);
  // A value only the user's file sets holds (Claude Code's default is the one required otherwise).
  const weak = check([host("user", { sandbox: { enableWeakerNestedSandbox: true } }), project]);
  assert.deepEqual(weak.map((f) => f.sandbox?.key), ["enableWeakerNestedSandbox"]);
  // A user's excludedCommands concatenates with the project's.
  const ex = check([host("user", { sandbox: { excludedCommands: ["git"] } }), project]);
  assert.deepEqual(ex.map((f) => [f.file, f.sandbox?.key]), [
    ["/home/op/.claude/settings.json", "excludedCommands"],
  ]);
  // Its allowWrite re-opens a trust root to sandboxed commands.
  const open = check([
    host("user", { sandbox: { filesystem: { allowWrite: [`//${ROOT.slice(1)}/references`] } } }),
    project,
  ]);
  assert.deepEqual(open.map((f) => [f.code, f.rule]), [[
    "SETTINGS_REOPENED",
    "Edit(./references/**)",
  ]]);
  // Its deny rules are not the project's: with none in the project, each is still missing.
  const onlyUser = check([host("user", { permissions: { deny: ALL } })]);
  assert.ok(onlyUser.some((f) => f.code === "SETTINGS_NONE"), JSON.stringify(onlyUser));
  assert.deepEqual(missing(onlyUser), ALL);
});
