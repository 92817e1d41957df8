/**
 * JSON-RPC 2.0 over stdio as MCP frames it: one message per line (UTF-8, no embedded newline),
 * read from a byte stream and answered on another. This module knows nothing of MCP's methods:
 * it classifies each line ({@link classifyLine}, pure), keeps a bounded memory of the ids used
 * ({@link IdWindow}), and runs one handler over a stream ({@link serveLines}), one request at a
 * time, so a flood of calls is held by the pipe, not by this process.
 *
 * What it refuses, with the JSON-RPC codes: a line that is not JSON (`-32700`), a batch (an
 * array: MCP removed batching in 2025-06-18), anything but an object with `jsonrpc: "2.0"`, an id
 * that is not a string or an integer, a `notifications/…` method that carries an id, an id the
 * client used before (`-32600`), and a line longer than {@link MAX_LINE_BYTES} (`-32700`, the
 * line's bytes dropped as they arrive).
 *
 * @example
 * ```ts
 * import { classifyLine } from "./jsonrpc.ts";
 * import assert from "node:assert/strict";
 * const m = classifyLine('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * assert.equal(m.kind, "request");
 * assert.equal(classifyLine("[1]").kind, "invalid");
 * ```
 * @module
 */

/** The longest line read as one message; longer ones are dropped and answered `-32700`. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** How many recent request ids {@link IdWindow} remembers to refuse a reuse. */
export const ID_WINDOW = 4096;

/** JSON-RPC's error codes as MCP uses them. */
export const RPC = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
});

/** A request id: a string or an integer (MCP forbids `null`). */
export type RpcId = string | number;

/** One line, classified. */
export type Incoming =
  | {
    readonly kind: "request";
    readonly id: RpcId;
    readonly method: string;
    readonly params: Readonly<Record<string, unknown>>;
  }
  | {
    readonly kind: "notification";
    readonly method: string;
    readonly params: Readonly<Record<string, unknown>>;
  }
  /** A response to a request of ours (this server sends none): ignored. */
  | { readonly kind: "response" }
  /** Answered with an error: `id` is the message's when it could be read, else `null`. */
  | {
    readonly kind: "invalid";
    readonly id: RpcId | null;
    readonly code: number;
    readonly message: string;
  };

/** An error a method handler throws to answer with a JSON-RPC error instead of a result. */
export class RpcError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** An error with a JSON-RPC code. */
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
    this.name = "RpcError";
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function idOf(v: unknown): RpcId | null | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  return v === undefined ? undefined : null;
}

function invalid(id: RpcId | null, message: string, code: number = RPC.INVALID_REQUEST): Incoming {
  return { kind: "invalid", id, code, message };
}

/**
 * What one line holds. Pure.
 *
 * @example
 * ```ts
 * import { classifyLine } from "./jsonrpc.ts";
 * import assert from "node:assert/strict";
 * assert.equal(classifyLine("{").kind, "invalid");
 * const n = classifyLine('{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}');
 * assert.deepEqual(n.kind === "invalid" && n.id, 3);
 * ```
 */
export function classifyLine(line: string): Incoming {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return invalid(null, "the line is not JSON", RPC.PARSE_ERROR);
  }
  if (Array.isArray(value)) {
    return invalid(null, "a batch (a JSON array) is not accepted: send one message per line");
  }
  if (!isObject(value)) return invalid(null, "a message must be a JSON object");
  const id = idOf(value.id);
  if (id === null) return invalid(null, "the id must be a string or an integer");
  if (value.jsonrpc !== "2.0") {
    return invalid(id ?? null, 'the message must carry "jsonrpc": "2.0"');
  }
  if (value.method === undefined && ("result" in value || "error" in value)) {
    return { kind: "response" };
  }
  if (typeof value.method !== "string") return invalid(id ?? null, "the method must be a string");
  const params = value.params === undefined ? {} : value.params;
  if (!isObject(params)) {
    return invalid(id ?? null, "params must be an object", RPC.INVALID_PARAMS);
  }
  if (id === undefined) return { kind: "notification", method: value.method, params };
  if (value.method.startsWith("notifications/")) {
    return invalid(id, `${value.method} is a notification: it carries no id`);
  }
  return { kind: "request", id, method: value.method, params };
}

/**
 * The ids a client used most recently (at most {@link ID_WINDOW}): a request that reuses one is
 * refused. Memory is bounded; an id older than the window is not remembered.
 *
 * @example
 * ```ts
 * import { IdWindow } from "./jsonrpc.ts";
 * import assert from "node:assert/strict";
 * const w = new IdWindow(2);
 * assert.equal(w.use(1), true);
 * assert.equal(w.use(1), false);
 * ```
 */
export class IdWindow {
  readonly #max: number;
  readonly #seen = new Set<string>();

  /** A window of `max` ids. */
  constructor(max: number = ID_WINDOW) {
    this.#max = max;
  }

  /** Records `id`; false when it was used already (within the window). */
  use(id: RpcId): boolean {
    // `1` and `"1"` are different ids.
    const key = `${typeof id}:${id}`;
    if (this.#seen.has(key)) return false;
    this.#seen.add(key);
    if (this.#seen.size > this.#max) {
      const oldest = this.#seen.values().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    return true;
  }
}

/** One line read, or a line dropped for its length. */
export type Line = { readonly text: string } | { readonly tooLong: true } | {
  readonly notUtf8: true;
};

/**
 * The lines of a byte stream, `\n`-separated (a `\r` before it dropped), each at most `max`
 * bytes; a longer one is reported once as `tooLong` and its bytes dropped as they arrive, so
 * memory stays within `max` plus one chunk.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readLines } from "./jsonrpc.ts";
 * const input = new Blob(["a\nb\n"]).stream();
 * const lines: unknown[] = [];
 * for await (const l of readLines(input)) lines.push(l);
 * assert.deepEqual(lines, [{ text: "a" }, { text: "b" }]);
 * ```
 */
export async function* readLines(
  input: ReadableStream<Uint8Array>,
  max: number = MAX_LINE_BYTES,
): AsyncGenerator<Line> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  const finish = (): Line => {
    const all = new Uint8Array(size);
    let off = 0;
    for (const p of parts) {
      all.set(p, off);
      off += p.length;
    }
    parts = [];
    size = 0;
    const end = all.length > 0 && all[all.length - 1] === 13 ? all.length - 1 : all.length;
    try {
      return { text: decoder.decode(all.subarray(0, end)) };
    } catch {
      return { notUtf8: true };
    }
  };
  for await (const chunk of input) {
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (!dropping) {
        if (size + piece.length > max) {
          dropping = true;
          parts = [];
          size = 0;
          yield { tooLong: true };
        } else if (piece.length > 0) {
          // A copy: the stream may reuse its chunk's buffer.
          parts.push(piece.slice());
          size += piece.length;
        }
      }
      if (nl === -1) break;
      if (dropping) dropping = false;
      else yield finish();
      start = nl + 1;
    }
  }
  if (!dropping && size > 0) yield finish();
}

/** What a server does with the messages {@link serveLines} reads. */
export interface RpcHandler {
  /** Answers a request: its result, or throws {@link RpcError} for an error answer. */
  request(method: string, params: Readonly<Record<string, unknown>>): Promise<unknown>;
  /** Takes a notification (no answer is sent). */
  notify(method: string, params: Readonly<Record<string, unknown>>): void;
}

/** Where {@link serveLines} writes its answers. */
export interface LineSink {
  /** Writes all of `bytes`; may throw once the reader is gone. */
  write(bytes: Uint8Array): Promise<void>;
}

/**
 * A sink over a Deno writer that writes every byte (a `write` may take only part).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { writerSink } from "./jsonrpc.ts";
 * const written: string[] = [];
 * const sink = writerSink({ write: (p) => (written.push(new TextDecoder().decode(p)), Promise.resolve(p.length)) });
 * await sink.write(new TextEncoder().encode("{}\n"));
 * assert.deepEqual(written, ["{}\n"]);
 * ```
 */
export function writerSink(w: { write(p: Uint8Array): Promise<number> }): LineSink {
  return {
    async write(bytes) {
      let off = 0;
      while (off < bytes.length) off += await w.write(bytes.subarray(off));
    },
  };
}

const encoder = new TextEncoder();

/**
 * The answer to a request as one line: a result, or an error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answerLine } from "./jsonrpc.ts";
 * assert.equal(answerLine(1, { result: {} }), '{"jsonrpc":"2.0","id":1,"result":{}}\n');
 * ```
 */
export function answerLine(
  id: RpcId | null,
  a: { readonly result: unknown } | { readonly code: number; readonly message: string },
): string {
  const body = "result" in a
    ? { jsonrpc: "2.0", id, result: a.result }
    : { jsonrpc: "2.0", id, error: { code: a.code, message: a.message } };
  // JSON.stringify escapes every newline inside strings, so the line stays one line.
  return JSON.stringify(body) + "\n";
}

/**
 * Serves `input` with `handler` until the input ends (or the output is gone): one message at a
 * time, each request answered before the next line is read. A handler that throws anything but
 * {@link RpcError} is answered `-32603` and the loop goes on. Resolves when done.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveLines } from "./jsonrpc.ts";
 * const input = new Blob(['{"jsonrpc":"2.0","id":1,"method":"ping"}\n']).stream();
 * const out: string[] = [];
 * await serveLines(input, { write: (b) => Promise.resolve(void out.push(new TextDecoder().decode(b))) }, {
 *   request: (method) => method === "ping" ? Promise.resolve({}) : Promise.reject(new Error("no")),
 *   notify: () => {},
 * });
 * assert.deepEqual(out, ['{"jsonrpc":"2.0","id":1,"result":{}}\n']);
 * ```
 */
export async function serveLines(
  input: ReadableStream<Uint8Array>,
  out: LineSink,
  handler: RpcHandler,
): Promise<void> {
  const ids = new IdWindow();
  const send = async (line: string): Promise<boolean> => {
    try {
      await out.write(encoder.encode(line));
      return true;
    } catch {
      // The client closed its end: nobody is left to answer.
      return false;
    }
  };
  for await (const line of readLines(input)) {
    let answer: string | null;
    if ("tooLong" in line) {
      answer = answerLine(null, {
        code: RPC.PARSE_ERROR,
        message: `the message is longer than ${MAX_LINE_BYTES} bytes; dropped`,
      });
    } else if ("notUtf8" in line) {
      answer = answerLine(null, { code: RPC.PARSE_ERROR, message: "the line is not UTF-8" });
    } else if (line.text.trim() === "") {
      answer = null;
    } else {
      answer = await answerOf(classifyLine(line.text), ids, handler);
    }
    if (answer !== null && !(await send(answer))) return;
  }
}

async function answerOf(m: Incoming, ids: IdWindow, handler: RpcHandler): Promise<string | null> {
  switch (m.kind) {
    case "response":
      return null;
    case "invalid":
      return answerLine(m.id, m);
    case "notification":
      try {
        handler.notify(m.method, m.params);
      } catch {
        // A notification has no answer, not even an error.
      }
      return null;
    case "request": {
      if (!ids.use(m.id)) {
        return answerLine(m.id, {
          code: RPC.INVALID_REQUEST,
          message: `the id ${JSON.stringify(m.id)} was used already in this session`,
        });
      }
      try {
        return answerLine(m.id, { result: await handler.request(m.method, m.params) });
      } catch (e) {
        if (e instanceof RpcError) return answerLine(m.id, e);
        return answerLine(m.id, {
          code: RPC.INTERNAL_ERROR,
          message: `internal error: ${e instanceof Error ? e.message : String(e)}`,
        });
      }
    }
  }
}
