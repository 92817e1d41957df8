/** The gate argv digest must match Python's `json.dumps(argv, separators=(",", ":"))` hash. */

import { compactArgvJson, gateArgvDigest } from "../../lib/sandbox/mod.ts";
import assert from "node:assert/strict";

// Computed with CPython 3.11: hashlib.sha256(json.dumps(a, separators=(",", ":")).encode()).
const ARGV = ["python3", "scripts/scan.py", "{file}", 'é\u007f"\\\n\u{1f600}'];

Deno.test("gate argv: compact ASCII-escaped JSON, byte for byte", () => {
  assert.deepEqual(
    compactArgvJson(ARGV),
    '["python3","scripts/scan.py","{file}","\\u00e9\\u007f\\"\\\\\\n\\ud83d\\ude00"]',
  );
  assert.deepEqual(compactArgvJson([]), "[]");
});

Deno.test("gate argv: sha256 matches the Python reference", () => {
  assert.deepEqual(
    gateArgvDigest(ARGV),
    "ce737ec4a939dbacddec3af91a033ce7e52b3ad729f15147cc0250755ba03b7b",
  );
  assert.deepEqual(
    gateArgvDigest([]),
    "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
  );
});
