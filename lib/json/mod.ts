/**
 * The surface of `lib/json/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  type JsonDocument,
  type JsonPath,
  JsonReadError,
  MAX_JSON_DEPTH,
  type Position,
  positionAt,
  readJson,
} from "./reader.ts";
export {
  array,
  boolean,
  checkShape,
  fieldsOf,
  type Infer,
  int,
  jsonSchema,
  jsonTypeName,
  literal,
  object,
  oneOf,
  optional,
  record,
  type Shape,
  type ShapeIssue,
  type ShapeResult,
  string,
  union,
} from "./shape.ts";
