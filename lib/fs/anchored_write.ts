/**
 * Replacing or removing one file inside a project (or one entry and all below it) so that a
 * directory swapped for a symlink between the checks and the write cannot redirect the write.
 *
 * Deno offers no `openat(2)`: it turns every relative path into `getcwd()` + name before calling
 * the kernel, and it treats `/proc/self/fd` and `/dev/fd` as special files that need
 * `--allow-all`. So the anchored part runs in a small fixed Perl program (`/usr/bin/perl`, part of
 * every Debian system and of macOS; only its core `Fcntl` and `IO::Handle` modules are used),
 * which works the way `openat` would:
 *
 * 1. starting in the project root, it walks the directories one name at a time: `lstat` (a
 *    symlink or a non-directory is refused), `chdir` to that single name, and `stat(".")` must
 *    show the same device and inode, so a swap between the two is caught; with `create`, missing
 *    directories are made (0755) on the way;
 * 2. in the last directory, the target must be absent or a regular file (opened `O_NOFOLLOW`,
 *    `fstat` compared with `lstat`); its bytes are sent back;
 * 3. this module decides on those bytes (the caller's base check, and whatever must be done once
 *    the bytes are known good and before they change: a deletion's spend; the mode, always by
 *    `replacementMode`: the target's permission bits without setuid, setgid and sticky, or the
 *    caller's mode for a new file) and answers; the program then checks the target is still the
 *    same inode, writes a temporary file created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`) in
 *    that directory, fsyncs it, sets its mode (it refuses one above `0777`), renames it over the
 *    target (a symlink there is replaced, never followed), and fsyncs the directory.
 *
 * Every name after the walk is relative to the process's working directory, which the kernel
 * holds as an inode, so no later swap of any path component can move the write.
 *
 * The same walk also removes a whole entry ({@link anchoredRemoveTree}: what a run left in a
 * granted root): below the walk, each directory is entered by its single name and checked the
 * same way, emptied, left by `..` (which must lead back to the very folder it was entered from:
 * device and inode), and removed; anything else is unlinked by name, so a link is removed, never
 * followed. Before a write or an unlink decides anything, the target's folder must be one this
 * process can change (`access(2)`), so a decision (and what it spends) is not made for a change
 * that could not be made.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchoredReplace } from "./anchored_write.ts";
 * const root = Deno.makeTempDirSync();
 * await anchoredReplace({
 *   root, dirs: ["new"], name: "a.txt", op: "write", createDirs: true,
 *   decide: () => ({ newFileMode: 0o644, content: new TextEncoder().encode("hi\n") }),
 * });
 * assert.equal(Deno.readTextFileSync(`${root}/new/a.txt`), "hi\n");
 * ```
 * @module
 */
import { FsSafetyError } from "../errors.ts";
import { PERL_PATH } from "../host/programs.ts";
import { replacementMode } from "./atomic_write.ts";
import { checkName } from "./path_walk.ts";

/** Largest existing target read back for the decision. */
export const MAX_ANCHORED_TARGET = 64 * 1024 * 1024;

const SCRIPT = String.raw`
use strict; use warnings; use Fcntl; use IO::Handle;
binmode STDIN; binmode STDOUT; $| = 1;
my ($op, $create, $max, $name, @segs) = @ARGV;
my $at = "dir";
sub fail { print STDOUT "E $_[0] $at $_[1]\n"; exit 3; }
sub rmtree_in {
  no warnings 'recursion';
  my ($n) = @_;
  my @l = lstat($n);
  if (!@l) { return if $!{ENOENT}; fail("STAT", "$n: $!"); }
  if (!-d _) { unlink($n) or $!{ENOENT} or fail("UNLINK", "$n: $!"); return; }
  my @p = stat(".") or fail("STAT", "the folder holding $n");
  chdir($n) or fail("CHDIR", "$n: $!");
  my @c = stat(".") or fail("STAT", $n);
  fail("SWAPPED", $n) unless $c[0] == $l[0] && $c[1] == $l[1];
  opendir(my $dh, ".") or fail("OPENDIR", "$n: $!");
  my @names = grep { $_ ne "." && $_ ne ".." } readdir($dh);
  closedir($dh);
  rmtree_in($_) for @names;
  chdir("..") or fail("CHDIR", "back from $n: $!");
  my @b = stat(".") or fail("STAT", "the folder holding $n");
  fail("SWAPPED", "the folder holding $n") unless $b[0] == $p[0] && $b[1] == $p[1];
  rmdir($n) or $!{ENOENT} or fail("RMDIR", "$n: $!");
}
for my $s (@segs) {
  my @l = lstat($s);
  if (!@l) {
    fail("MISSING", $s) unless $create;
    mkdir($s, 0755) or $!{EEXIST} or fail("MKDIR", "$s: $!");
    @l = lstat($s) or fail("MISSING", $s);
  }
  fail("SYMLINK", $s) if -l _;
  fail("NOTDIR", $s) unless -d _;
  chdir($s) or fail("CHDIR", "$s: $!");
  my @c = stat(".") or fail("STAT", $s);
  fail("SWAPPED", $s) unless $c[0] == $l[0] && $c[1] == $l[1];
}
$at = "target";
if ($op eq "rmtree") {
  # The entry and everything under it, without following a link: each directory is entered by
  # its single name and must be the one lstat saw, and the way back ("..") must lead to the very
  # folder it was entered from, so a folder moved meanwhile takes nothing elsewhere (and no
  # handle is held per level: a deep tree cannot use up the descriptors).
  sysopen(my $d, ".", O_RDONLY) or fail("SYNCDIR", "$!");
  rmtree_in($name);
  $d->sync; close $d;
  print STDOUT "OK\n";
  exit 0;
}
{
  # A folder this process cannot change is refused before anything is decided or spent.
  use filetest 'access';
  fail("NOTWRITABLE", "the folder holding $name") unless -w "." && -x ".";
}
# The directory is opened (for its fsync) before anything is decided: once the rename or the
# unlink is done the act stands, and only a failure before it may be reported as a refusal.
sysopen(my $d, ".", O_RDONLY) or fail("SYNCDIR", "$!");
my ($tdev, $tino) = (-1, -1);
my @t = lstat($name);
if (@t) {
  fail("SYMLINK", $name) if -l _;
  fail("NOTFILE", $name) unless -f _;
  sysopen(my $fh, $name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) or fail("OPEN", "$name: $!");
  my @f = stat($fh);
  fail("SWAPPED", $name) unless @f && $f[0] == $t[0] && $f[1] == $t[1];
  fail("LARGE", $name) if $f[7] > $max;
  ($tdev, $tino) = ($f[0], $f[1]);
  my ($data, $buf) = ('', '');
  while (1) {
    my $n = sysread($fh, $buf, 65536);
    fail("READ", "$!") unless defined $n;
    last if $n == 0;
    $data .= $buf;
    fail("LARGE", $name) if length($data) > $max;
  }
  close $fh;
  print STDOUT "F " . length($data) . " " . ($f[2] & 07777) . "\n" . $data;
} else {
  fail("STAT", "$name: $!") unless $!{ENOENT};
  print STDOUT "A\n";
}
my $line = <STDIN>;
exit 4 unless defined $line;
chomp $line;
exit 0 if $line eq "X";
my ($go, $mode, $len) = split / /, $line;
fail("PROTO", $line) unless defined $go && $go eq "G";
# Never a setuid, setgid or sticky bit (the caller strips them; this refuses a caller that did not).
fail("PROTO", $line) unless defined $mode && $mode =~ /^[0-7]{1,3}$/;
my @u = lstat($name);
if (@u) { fail("CHANGED", $name) if -l _ || $u[0] != $tdev || $u[1] != $tino; }
else { fail("CHANGED", $name) if $tino != -1; }
if ($op eq "write") {
  my $tmp = sprintf(".%s.%08x%08x.tmp", substr($name, 0, 100), int(rand(4294967295)), int(rand(4294967295)));
  sysopen(my $w, $tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600) or fail("CREATE", "$tmp: $!");
  my $left = $len;
  while ($left > 0) {
    my $buf;
    my $n = read(STDIN, $buf, $left > 65536 ? 65536 : $left);
    if (!$n) { unlink $tmp; fail("PROTO", "short content"); }
    my $off = 0;
    while ($off < $n) {
      my $k = syswrite($w, $buf, $n - $off, $off);
      if (!defined $k) { unlink $tmp; fail("WRITE", "$!"); }
      $off += $k;
    }
    $left -= $n;
  }
  if (!chmod(oct($mode), $w) || !$w->sync || !close($w)) { unlink $tmp; fail("WRITE", "$!"); }
  if (!rename($tmp, $name)) { unlink $tmp; fail("RENAME", "$!"); }
} elsif ($op eq "unlink") {
  fail("CHANGED", $name) if $tino == -1;
  unlink($name) or fail("UNLINK", "$!");
} else {
  fail("PROTO", $op);
}
$d->sync; close $d;
print STDOUT "OK\n";
exit 0;
`;

/** Where an anchored operation acts: the anchor, the folders down from it, the entry's name. */
export interface AnchoredPlace {
  /** Absolute directory the walk starts in (the anchor). */
  root: string;
  /** Directory names from the root down to the entry's directory. */
  dirs: readonly string[];
  /** The entry's name in that directory. */
  name: string;
  /** The Perl program (default `/usr/bin/perl`). */
  perl?: string;
}

/** The target as the anchored walk found it. */
export interface AnchoredTarget {
  /** Its bytes. */
  bytes: Uint8Array;
  /** Its mode bits (`& 0o7777`: setuid, setgid and sticky included, as found). */
  mode: number;
}

/** What {@link AnchoredSpec.decide} answers. */
export interface AnchoredDecision {
  /** The mode when the target is absent (an existing target's permission bits are kept). */
  newFileMode: number;
  /** The bytes to write (ignored for `unlink`). */
  content: Uint8Array;
}

/** What to do (the anchor is the project root). */
export interface AnchoredSpec extends AnchoredPlace {
  /** Replace the file, or remove it. */
  op: "write" | "unlink";
  /** Create missing directories (0755) on the way. */
  createDirs: boolean;
  /**
   * Decides on the current target (`null`: absent): returns the content to write (ignored for
   * `unlink`) and the mode for a new file, or throws to refuse (nothing is then changed). The
   * written file's mode is `replacementMode(current?.mode ?? null, newFileMode)`: an existing
   * target's permission bits are kept, and no file ever gets setuid, setgid or sticky.
   */
  decide(current: AnchoredTarget | null): AnchoredDecision | Promise<AnchoredDecision>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Reads a child's stdout incrementally: short lines, then a body of known length, which is
 * filled chunk by chunk into one buffer (a 64 MiB target must not be re-copied per chunk).
 */
class Reader {
  /** Received and not yet consumed. */
  #pending: Uint8Array = new Uint8Array(0);
  #done = false;
  constructor(private readonly r: ReadableStreamDefaultReader<Uint8Array>) {}
  async #chunk(): Promise<Uint8Array | null> {
    if (this.#done) return null;
    const { value, done } = await this.r.read();
    if (done || value === undefined) {
      this.#done = true;
      return null;
    }
    return value;
  }
  async line(): Promise<string | null> {
    for (;;) {
      const i = this.#pending.indexOf(0x0a);
      if (i >= 0) {
        const l = dec.decode(this.#pending.subarray(0, i));
        this.#pending = this.#pending.subarray(i + 1);
        return l;
      }
      const c = await this.#chunk();
      if (c === null) return null;
      const b = new Uint8Array(this.#pending.length + c.length);
      b.set(this.#pending);
      b.set(c, this.#pending.length);
      this.#pending = b;
    }
  }
  async bytes(n: number): Promise<Uint8Array | null> {
    const out = new Uint8Array(n);
    let off = 0;
    let src: Uint8Array | null = this.#pending;
    while (src !== null) {
      const k = Math.min(n - off, src.length);
      out.set(src.subarray(0, k), off);
      off += k;
      if (off === n) {
        this.#pending = src.subarray(k);
        return out;
      }
      src = await this.#chunk();
    }
    this.#pending = new Uint8Array(0);
    return null;
  }
}

/** Starts the helper for one operation at `place` (its names checked first). */
function spawnHelper(
  place: AnchoredPlace,
  op: "write" | "unlink" | "rmtree",
  createDirs: boolean,
): Deno.ChildProcess {
  for (const d of place.dirs) checkName(d);
  checkName(place.name);
  const perl = place.perl ?? PERL_PATH;
  try {
    return new Deno.Command(perl, {
      args: [
        "-e",
        SCRIPT,
        "--",
        op,
        createDirs ? "1" : "0",
        String(MAX_ANCHORED_TARGET),
        place.name,
        ...place.dirs,
      ],
      cwd: place.root,
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new FsSafetyError(
        "ANCHOR_UNAVAILABLE",
        `${perl} is needed to write files race-free and was not found`,
      );
    }
    throw e;
  }
}

function helperError(line: string | null, stderr: string): FsSafetyError {
  if (line === null) {
    return new FsSafetyError(
      "FILE_CHANGED",
      `the anchored write helper stopped without an answer${stderr ? `: ${stderr.trim()}` : ""}`,
    );
  }
  const m = /^E (\S+) (dir|target) ?(.*)$/.exec(line);
  if (m === null) return new FsSafetyError("FILE_CHANGED", `unexpected helper output: ${line}`);
  const [, code, at, what] = m;
  const withAt = { details: { at } };
  switch (code) {
    case "SYMLINK":
      return new FsSafetyError("SYMLINK", `${what} is a symlink`, withAt);
    case "NOTDIR":
      return new FsSafetyError("NOT_DIRECTORY", `${what} is not a directory`, withAt);
    case "NOTFILE":
      return new FsSafetyError("NOT_REGULAR_FILE", `${what} is not a regular file`, withAt);
    case "LARGE":
      return new FsSafetyError("FILE_TOO_LARGE", `${what} is too large`, withAt);
    case "MISSING":
      return new FsSafetyError("NOT_DIRECTORY", `directory ${what} is missing`, withAt);
    case "NOTWRITABLE":
      return new FsSafetyError("NOT_WRITABLE", `${what} is not writable by this process`, withAt);
    case "SWAPPED":
    case "CHANGED":
      return new FsSafetyError(
        "FILE_CHANGED",
        `${what} changed between the check and the write`,
        withAt,
      );
    default:
      return new FsSafetyError(
        "FILE_CHANGED",
        `the anchored write failed: ${code} ${what}`,
        withAt,
      );
  }
}

/**
 * Performs one anchored replace or remove (see the module doc).
 *
 * @throws {FsSafetyError} `SYMLINK`, `NOT_DIRECTORY`, `NOT_REGULAR_FILE`, `FILE_TOO_LARGE`,
 *   `FILE_CHANGED` (with `details.at`: `"dir"` when a directory on the way failed, `"target"`
 *   when the target did), `ANCHOR_UNAVAILABLE`; and whatever `decide` throws.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchoredReplace } from "./anchored_write.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${root}/a.txt`, "old\n");
 * await anchoredReplace({
 *   root, dirs: [], name: "a.txt", op: "unlink", createDirs: false,
 *   decide: (current) => {
 *     if (current === null) throw new Error("a.txt is gone already");
 *     return { newFileMode: 0o644, content: new Uint8Array(0) };
 *   },
 * });
 * assert.throws(() => Deno.statSync(`${root}/a.txt`), Deno.errors.NotFound); // a.txt is removed
 * ```
 */
export async function anchoredReplace(spec: AnchoredSpec): Promise<void> {
  const child = spawnHelper(spec, spec.op, spec.createDirs);
  const out = new Reader(child.stdout.getReader());
  const errText = new Response(child.stderr).text();
  const stdin = child.stdin.getWriter();
  let finished = false;
  try {
    const head = await out.line();
    let current: AnchoredTarget | null = null;
    if (head !== null && head.startsWith("F ")) {
      const [, len, mode] = head.split(" ");
      const bytes = await out.bytes(Number(len));
      if (bytes === null) throw helperError(null, await errText);
      current = { bytes, mode: Number(mode) };
    } else if (head !== "A") {
      throw helperError(head, await errText);
    }
    let decision: AnchoredDecision;
    try {
      decision = await spec.decide(current);
    } catch (e) {
      await stdin.write(enc.encode("X\n"));
      throw e;
    }
    const content = spec.op === "write" ? decision.content : new Uint8Array(0);
    // The one place the written file's mode is decided (unused by an unlink).
    const mode = replacementMode(current?.mode ?? null, decision.newFileMode);
    try {
      await stdin.write(enc.encode(`G ${mode.toString(8)} ${content.length}\n`));
      if (content.length > 0) await stdin.write(content);
      await stdin.close();
      finished = true;
    } catch (e) {
      // The helper refuses a changed target right after the go line and exits without reading
      // the content: its answer, read below, says why.
      if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
    }
    const last = await out.line();
    if (last !== "OK") throw helperError(last, await errText);
  } finally {
    if (!finished) {
      try {
        await stdin.close();
      } catch { /* closed */ }
    }
    await child.status;
    await errText.catch(() => "");
  }
}

/**
 * Removes one entry and everything under it, reached the anchored way (see the module doc): the
 * walk to its directory refuses a link or a swapped folder, and the removal enters each directory
 * below by its single name (which must be the one `lstat` saw) and comes back by `..` only to the
 * very folder it entered from, so no link is followed and no folder moved meanwhile can take the
 * removal outside the anchor. An entry already gone is no error; a link is removed itself. The
 * anchor itself is taken as given: to trust no folder on the way, anchor at `/` and name every
 * folder in `dirs`.
 *
 * @throws {FsSafetyError} `SYMLINK` or `NOT_DIRECTORY` (a folder on the way), `FILE_CHANGED` (a
 *   folder swapped meanwhile, or an entry that could not be removed: the tree may be partly
 *   removed), `ANCHOR_UNAVAILABLE`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anchoredRemoveTree } from "./anchored_write.ts";
 * const root = Deno.makeTempDirSync();
 * Deno.mkdirSync(`${root}/a/.git/hooks`, { recursive: true });
 * await anchoredRemoveTree({ root, dirs: ["a"], name: ".git" });
 * assert.throws(() => Deno.lstatSync(`${root}/a/.git`), Deno.errors.NotFound);
 * assert.ok(Deno.lstatSync(`${root}/a`).isDirectory);
 * ```
 */
export async function anchoredRemoveTree(place: AnchoredPlace): Promise<void> {
  const child = spawnHelper(place, "rmtree", false);
  const out = new Reader(child.stdout.getReader());
  const errText = new Response(child.stderr).text();
  try {
    await child.stdin.close();
  } catch { /* the helper needs no input */ }
  try {
    const last = await out.line();
    if (last !== "OK") throw helperError(last, await errText);
  } finally {
    await child.status;
    await errText.catch(() => "");
  }
}
