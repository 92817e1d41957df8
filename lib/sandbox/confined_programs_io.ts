/**
 * Completing a loaded policy with its confined programs: the operator-owned file
 * (`~/.config/agentteams/confined/<name>-<digest>.json`) when present, else the brief's block,
 * validated path by path; both present is refused. The operator file's `gate_exec` is merged into
 * the gates.
 *
 * @example
 * ```ts ignore
 * // Not run: it needs a loaded brief and a project at /srv/repo.
 * import { withConfinedPrograms } from "./confined_programs_io.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const loaded: Policy; // from `loadPolicy`
 * const policy = withConfinedPrograms(loaded, { home: "/home/op", project: "/srv/repo" });
 * ```
 * @module
 */
import type { Policy } from "../policy/types.ts";
import { selectConfinedPrograms } from "./confined_programs.ts";
import { readConfinedFile } from "./operator_file_read.ts";

/**
 * Returns `policy` with `confinedPrograms` and `gates` settled (see the module doc).
 *
 * @throws {SandboxError} `CONFINED_INVALID`, `CONFINED_FILE_UNSAFE`, `CONFINED_PATH_UNSAFE`.
 * @example
 * ```ts ignore
 * // Not run: it needs loaded, which it declares rather than makes.
 * import { withConfinedPrograms } from "./confined_programs_io.ts";
 * import type { Policy } from "../policy/types.ts";
 * declare const loaded: Policy; // from `loadPolicy`
 * const policy = withConfinedPrograms(loaded, { home: "/home/op", project: "/work/p" });
 * policy.confinedPrograms?.source; // "operator-file" when the operator file exists
 * ```
 */
export function withConfinedPrograms(
  policy: Policy,
  opts: { home: string; project: string },
): Policy {
  const file = readConfinedFile({ projectReal: Deno.realPathSync(opts.project), home: opts.home });
  const selected = selectConfinedPrograms({
    brief: policy.confinedPrograms?.agents ?? null,
    file: file === null ? null : { data: file.data, sha256: file.sha256 },
    gates: policy.gates,
    protectedPaths: policy.protectedPaths,
    briefRel: policy.briefRel,
  });
  return { ...policy, confinedPrograms: selected.programs, gates: selected.gates };
}
