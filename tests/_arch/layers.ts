/**
 * The layer table of this repository (DESIGN.md section 4), top to bottom: a file imports only
 * from its own layer or the layers below, and no cycles between the units of a layer (each
 * `paths` entry) or between files. Edit it here; tests/architecture_test.ts checks the tree
 * against it (every entry must exist), `deno run --allow-read tests/_arch/report.ts` prints what it
 * finds, and the import map in docs/architecture.md is generated from it (`--write-doc`).
 *
 * @module
 */

import type { LayerTable } from "./imports.ts";

/** The repository's layers. */
export const LAYERS: LayerTable = {
  scan: ["main.ts", "lib/"],
  layers: [
    {
      name: "cli",
      paths: ["main.ts", "lib/cli/", "lib/permissions.ts"],
      externals: ["node:*"],
      surfaces: true,
    },
    {
      name: "acts",
      paths: [
        "lib/acts/",
        "lib/runner/",
        "lib/init/",
        "lib/mod.ts",
        "lib/triad.ts",
        "lib/team_audit.ts",
      ],
      externals: ["node:*"],
      surfaces: true,
    },
    {
      name: "capabilities",
      paths: [
        "lib/proposals/",
        "lib/requests/",
        "lib/sandbox/",
        "lib/ledger/",
        "lib/policy/",
        "lib/artifacts/",
        "lib/queue/",
        "lib/audit/",
        "lib/authz/",
        "lib/release/",
        "lib/mcp/",
      ],
      externals: ["node:*", "zod", "yaml", "smol-toml"],
      surfaces: true,
    },
    {
      name: "core",
      paths: [
        "lib/fs/",
        "lib/crypto/",
        "lib/process/",
        "lib/git/",
        "lib/host/",
        "lib/json/",
        "lib/errors.ts",
        "lib/pycompat/",
        "lib/layout.ts",
        "lib/env.ts",
        "lib/text/",
        "lib/time/",
      ],
      externals: ["node:*", "zod"],
      surfaces: true,
    },
  ],
};
