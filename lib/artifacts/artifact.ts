/**
 * Reading an artifact: at most 2 MiB of UTF-8 text in strict JSON (read by the one JSON reader,
 * `lib/json/reader.ts`: no comments, no trailing commas, no byte order mark, no key repeated in
 * one object), an object whose `kind` names one of the three schemas, validated strictly. Errors
 * name the field and the rule.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArtifact } from "./artifact.ts";
 * assert.throws(() => parseArtifact('{"kind": "nope"}'), { code: "ARTIFACT_INVALID" });
 * ```
 * @module
 */
import { FsSafetyError, ProposalError } from "../errors.ts";
import { readRegularFileWithin } from "../fs/safe_read.ts";
import { type JsonDocument, JsonReadError, MAX_JSON_DEPTH, readJson } from "../json/reader.ts";
import { findLoneSurrogate } from "../text/chars.ts";
import {
  type ChangeProposalT,
  checkArtifactShape,
  type CommandRequestT,
  type DeleteProposalT,
} from "./artifact_schema.ts";

/** Largest artifact file read. */
export const MAX_ARTIFACT_BYTES = 2 * 1024 * 1024;

/** A validated artifact. */
export type Artifact = ChangeProposalT | DeleteProposalT | CommandRequestT;

function invalid(message: string, details?: Record<string, unknown>): ProposalError {
  return new ProposalError("ARTIFACT_INVALID", message, { details });
}

/** The reader's refusal as the artifact's. */
function readError(e: JsonReadError): ProposalError {
  const { line, column } = e.position;
  const details = { line, column, error: e.code };
  if (e.code === "DuplicateKey") {
    return invalid(
      `the artifact repeats the key ${JSON.stringify(e.path[e.path.length - 1])} in one ` +
        "object: it would mean different things to different readers",
      details,
    );
  }
  if (e.code === "ByteOrderMark") {
    return invalid(
      "the artifact starts with a byte order mark (U+FEFF): write UTF-8 without one",
      details,
    );
  }
  if (e.code === "NestedTooDeep") {
    return invalid(
      `the artifact nests deeper than ${MAX_JSON_DEPTH} levels (line ${line}, column ${column})`,
      details,
    );
  }
  return invalid(`the artifact is not JSON: line ${line}, column ${column}: ${e.message}`, details);
}

/**
 * The JSON path of the first string (or key) that is not well-formed UTF-16 (a lone surrogate,
 * which has no UTF-8 form and no canonical JSON encoding), or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lonelySurrogateAt } from "./artifact.ts";
 * assert.equal(lonelySurrogateAt({ a: ["ok", "\ud800"] }, ""), "a[1]");
 * ```
 */
export function lonelySurrogateAt(v: unknown, at: string): string | null {
  const lone = findLoneSurrogate(v);
  if (lone === null) return null;
  // A bad key is reported at the object that holds it.
  const path = lone.key ? lone.path.slice(0, -1) : lone.path;
  let where = at;
  for (const part of path) {
    where = typeof part === "number" ? `${where}[${part}]` : where ? `${where}.${part}` : part;
  }
  return lone.key ? where || "artifact" : where;
}

/** A lone surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `s` with every lone surrogate written as its `\uXXXX` escape (a well-formed string is returned
 * as it is).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapeLoneSurrogates } from "./artifact.ts";
 * assert.equal(escapeLoneSurrogates('unknown field "x\ud800"'), 'unknown field "x\\ud800"');
 * assert.equal(escapeLoneSurrogates("\ud83d\ude00"), "\ud83d\ude00"); // (a pair)
 * ```
 */
export function escapeLoneSurrogates(s: string): string {
  if (s.isWellFormed()) return s;
  return s.replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/**
 * Validates a parsed JSON value as an artifact.
 *
 * @throws {ProposalError} `ARTIFACT_INVALID`
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validateArtifact } from "./artifact.ts";
 * assert.throws(() => validateArtifact({ kind: "delete-proposal" }), {
 *   message: /^missing required field "dispatch"/,
 * });
 * ```
 */
export function validateArtifact(v: unknown): Artifact {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw invalid("the artifact is not a JSON object");
  }
  const kind = (v as Record<string, unknown>).kind;
  if (kind !== "change-proposal" && kind !== "delete-proposal" && kind !== "command-request") {
    throw invalid(
      `kind ${JSON.stringify(kind)} is not change-proposal, delete-proposal or command-request`,
    );
  }
  const r = checkArtifactShape(kind, v);
  if (!r.ok) {
    // Unknown fields come first (with their "did you mean"), then the fields' own problems.
    const issue = r.issues[0];
    const where = issue.path.map(String).join(".");
    // The message quotes the artifact (an unknown key, a value): it must stay UTF-8 text, or the
    // refusal could not be recorded (the ledger's canonical JSON has no lone surrogate).
    const meant = r.issues.flatMap((i) =>
      i.code === "unknown" && i.suggestion !== undefined ? [i.suggestion] : []
    );
    throw invalid(
      escapeLoneSurrogates(where === "" ? issue.message : `${where}: ${issue.message}`),
      meant.length > 0
        ? { hint: `did you mean ${meant.map((m) => JSON.stringify(m)).join(", ")}?` }
        : undefined,
    );
  }
  return r.data;
}

/**
 * Parses artifact JSON text (strict JSON; see the module's notes). Throws `ARTIFACT_INVALID`
 * naming the line and column when the text is not JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseArtifact } from "./artifact.ts";
 * assert.throws(() => parseArtifact("[]"), {
 *   code: "ARTIFACT_INVALID",
 *   message: "the artifact is not a JSON object",
 * });
 * ```
 */
export function parseArtifact(text: string): Artifact {
  let doc: JsonDocument;
  try {
    // Lone surrogates are kept: each field refuses them with its own code (`PATH_INVALID`,
    // `CONTENT_NOT_UTF8`, ...) where the artifact is checked.
    doc = readJson(text, { dialect: "json", loneSurrogates: "keep" });
  } catch (e) {
    if (e instanceof JsonReadError) throw readError(e);
    throw e;
  }
  return validateArtifact(doc.value);
}

/**
 * Reads and parses an artifact file (a regular file, not a symlink, UTF-8, at most 2 MiB). The
 * file may lie where an agent can write, so its open has a deadline: a FIFO swapped in after the
 * check is refused, not waited on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readArtifactFile } from "./artifact.ts";
 * const path = Deno.makeTempDirSync() + "/proposal.json";
 * Deno.writeTextFileSync(path, '{"kind": "nope"}');
 * await assert.rejects(readArtifactFile(path), { code: "ARTIFACT_INVALID" });
 * ```
 */
export async function readArtifactFile(path: string): Promise<Artifact> {
  let bytes: Uint8Array;
  try {
    bytes = (await readRegularFileWithin(path, { maxBytes: MAX_ARTIFACT_BYTES, what: "artifact" }))
      .bytes;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw invalid(`artifact ${path} does not exist`);
    if (e instanceof FsSafetyError) throw invalid(e.message);
    throw e;
  }
  let text: string;
  try {
    // The byte order mark is kept, so the reader refuses it as it does in text.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalid(`artifact ${path} is not UTF-8`);
  }
  return parseArtifact(text);
}
