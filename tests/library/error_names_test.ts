/**
 * Every refusal class is named after itself in its own code, not only by `new.target.name`: the
 * release bundle is minified, and a minifier renames classes, while a refusal's JSON (`error`)
 * and its printed form carry the name.
 */
import assert from "node:assert/strict";
import * as errors from "../../lib/errors.ts";
import { NameRefused } from "../../lib/fs/session_dir.ts";

/** Any refusal class, called as every one of them can be: a code (or message) and a message. */
type Refusal = new (a: string, b: never) => Error;

Deno.test("each exported refusal class spells its own name out", () => {
  const classes = Object.entries(errors).filter(([, v]) =>
    typeof v === "function" && v.prototype instanceof errors.AgentTeamsError &&
    v !== errors.RelayedError
  ) as unknown as [string, Refusal][];
  assert.ok(classes.length >= 18, classes.map(([n]) => n).join());
  for (const [exported, cls] of classes) {
    assert.equal(new cls("X", "m" as never).name, exported);
    // A class renamed (as a minifier renames it) keeps the name its code spells out, where
    // `new.target.name` alone would follow the rename.
    const renamed = class Renamed extends cls {};
    assert.equal(new renamed("X", "m" as never).name, exported, exported);
  }
  const n = new NameRefused("/d", "x", "symlink", "a test");
  assert.equal(n.name, "NameRefused");
  assert.equal(n.toJSON().error, "NameRefused");
});
