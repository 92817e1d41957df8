/**
 * The surface of `lib/artifacts/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export {
  type Artifact,
  lonelySurrogateAt,
  readArtifactFile,
  validateArtifact,
} from "./artifact.ts";
export {
  ARTIFACT_SCHEMAS,
  type ChangeProposalT,
  type CommandRequestT,
  type DeleteProposalT,
  jsonSchemaOf,
  type SchemaName,
} from "./artifact_schema.ts";
