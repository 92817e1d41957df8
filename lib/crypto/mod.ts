/**
 * The surface of `lib/crypto/`: every name the rest of the tool uses from it. A file outside the
 * folder imports these, from here or (to load no more than it uses) from the file that defines
 * them; the architecture test refuses any other name, and any file not re-exported here.
 *
 * @module
 */

export { firstChainBreak } from "./chain.ts";
export {
  derToPem,
  importPrivatePem,
  importPublicPem,
  keyIdOf,
  keyIdOfKey,
  pemToDer,
  signHex,
  verifyHex,
} from "./ed25519.ts";
export { hexEqual, HmacKey, sha256Hex, sha256HexOnce } from "./hash.ts";
export {
  DECISION_KEY_ENV,
  GRANT_KEY_ENV,
  initKeys,
  KEY_ENV,
  keyDir,
  LEDGER_KEY_FILE,
  type LedgerKey,
  ledgerKeyPath,
  loadLedgerKey,
  readKeyFile,
  readRunnerPublicText,
  RUNNER_FORBIDDEN_ENV,
  RUNNER_SEAL_KEY_FILE,
  RUNNER_SEAL_PUB_FILE,
  runnerSealPair,
  SECRET_KEY_FILES,
  SIGNING_KEY_FILE,
  type TriadKeyKind,
  VERIFY_KEY_FILE,
  WAIVER_KEY_ENV,
} from "./keys.ts";
export {
  ackToken,
  generateSealPair,
  publicB64,
  type SealPair,
  sealPairFromPem,
  sealPairToPem,
  sealPublicFromPem,
  unb64,
  x25519PublicKey,
} from "./x25519.ts";
// The HPKE box (lib/crypto/seal.ts loads @hpke/core): import these names from ./seal.ts itself,
// as lib/queue/result.ts does, so that what imports this surface for the rest loads no HPKE.
export {
  openRequestBox,
  openSealed,
  REQUEST_SEAL_INFO,
  type RequestOpenInput,
  requestSealInfo,
  type RequestSealInput,
  SEAL_SUITE,
  type SealedBox,
  sealInfo,
  sealRequestTo,
  sealTo,
} from "./seal.ts";
export { WasmSha256 } from "./sha256_wasm.ts";
