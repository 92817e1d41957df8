/**
 * The Codex host model (lib/audit/hosts/codex.ts): a role file is a whole config layer, so
 * `default_permissions` (a permission profile) and a selected `[profiles.*]` table decide the
 * sandbox beside `sandbox_mode`; a file read-only by `sandbox_mode` but not by them is not
 * read-only. Each case failed on the audit before the model (it read `sandbox_mode` alone).
 */
import assert from "node:assert/strict";
import { auditEntries } from "../../lib/audit/team.ts";

const SECTION =
  '\ndeveloper_instructions = """\n## Write Policy: Return Proposals, Never Write\n"""\n';

const BASE = 'name = "w"\ndescription = "d"\nsandbox_mode = "read-only"\n';

/** The errors of BASE, the section, then `extra` (tables last: TOML scopes keys to them). */
function codes(text: string): string[] {
  const full = text.startsWith(BASE) ? BASE + SECTION + text.slice(BASE.length) : text + SECTION;
  return auditEntries([{ rel: ".codex/agents/w.toml", state: "text", text: full }], {
    switchOn: true,
    frameworks: [],
  }).filter((f) => f.severity === "error").map((f) => f.code);
}

Deno.test("codex: sandbox_mode read-only alone is clean", () => {
  assert.deepEqual(codes(BASE), []);
});

const WIDER: [string, string][] = [
  ["a built-in workspace permission profile", 'default_permissions = ":workspace"\n'],
  ["the full-access built-in profile", 'default_permissions = ":danger-full-access"\n'],
  [
    "a named profile granting write",
    'default_permissions = "w"\n[permissions.w.filesystem]\n":workspace_roots" = "write"\n',
  ],
  ["a named profile that isn't defined", 'default_permissions = "nowhere"\n'],
  [
    "a named profile extending the workspace profile",
    'default_permissions = "w"\n[permissions.w]\nextends = ":workspace"\n[permissions.w.filesystem]\n":root" = "read"\n',
  ],
  [
    "a selected config profile's sandbox_mode",
    'profile = "p"\n[profiles.p]\nsandbox_mode = "workspace-write"\n',
  ],
  [
    "a selected config profile's default_permissions",
    'profile = "p"\n[profiles.p]\ndefault_permissions = ":workspace"\n',
  ],
];

for (const [what, extra] of WIDER) {
  Deno.test(`codex: ${what} over sandbox_mode "read-only" is CODEX_SANDBOX`, () => {
    const text = BASE + extra;
    assert.ok(codes(text).includes("CODEX_SANDBOX"), `${what}: ${codes(text).join(", ")}`);
  });
}

Deno.test("codex: the read-only built-in profile and a read-only named profile stay clean", () => {
  assert.deepEqual(codes(BASE + 'default_permissions = ":read-only"\n'), []);
  assert.deepEqual(
    codes(BASE + 'default_permissions = "r"\n[permissions.r.filesystem]\n":root" = "read"\n'),
    [],
  );
});

Deno.test("codex: a role file naming a config lockfile is CODEX_EXTERNAL; export_dir, plugins, marketplaces are not", () => {
  // Codex replays `load_path` as the whole config; the check is the one codexSpots, shared by
  // agents and `.codex/config.toml`, so a role file gets it too (the widest reading).
  assert.deepEqual(codes(BASE + '[debug.config_lockfile]\nload_path = "/tmp/l.toml"\n'), [
    "CODEX_EXTERNAL",
  ]);
  assert.deepEqual(codes(BASE + 'debug = { config_lockfile = { load_path = "" } }\n'), [
    "CODEX_EXTERNAL",
  ]);
  assert.deepEqual(
    codes(
      BASE + '[debug.config_lockfile]\nexport_dir = "/tmp"\n[plugins."p@m"]\nenabled = true\n' +
        '[marketplaces.m]\nsource_type = "local"\nsource = "/m"\n',
    ),
    [],
  );
});
