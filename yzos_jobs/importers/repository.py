"""Where a coding session's repository is, from paths the session printed (POSIX or Windows
spelling), resolved lexically: the file system of the machine that wrote them is not this one.

A repository is identified by its normalised path (`.` and `..` resolved, no trailing
separator, Windows paths with backslashes). A git worktree's admin directory,
`<main>/.git/worktrees/<name>`, names its main repository: a worktree is the main repository's
project, as is any other relative spelling of the same directory.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePath, PurePosixPath, PureWindowsPath

# The functions below are pure and called per session with the few paths a history repeats:
# each remembers its recent answers.
_cached = lru_cache(maxsize=1024)

_DRIVE = re.compile(r"^[A-Za-z]:(?:[\\/]|$)")
_SEPARATORS = re.compile(r"[\\/]+")


def is_windows(path: str) -> bool:
    """A drive-letter or UNC path, or one that separates with backslashes only."""
    return bool(_DRIVE.match(path)) or path.startswith("\\\\") or ("\\" in path and "/" not in path)


def is_absolute(path: str) -> bool:
    return path.startswith(("/", "\\\\")) or bool(_DRIVE.match(path))


def flavour(path: str) -> type[PurePath]:
    """The path class of the path's spelling: Windows or POSIX."""
    return PureWindowsPath if is_windows(path) else PurePosixPath


def segments(path: str) -> list[str]:
    """The path's names, whatever separator it uses (the anchor left out)."""
    anchor = flavour(path)(path).anchor
    return [p for p in _SEPARATORS.split(path[len(anchor) :]) if p]


@_cached
def normalise(path: str) -> str | None:
    """The path with `.` and `..` resolved and no trailing separator, in its own spelling; None
    for an empty path. A relative path keeps the `..` it cannot resolve."""
    text = path.strip().strip("\"'")
    if not text:
        return None
    cls = flavour(text)
    anchor = cls(text).anchor
    parts: list[str] = []
    for part in segments(text):
        if part == ".":
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part != ".." or not anchor:
            parts.append(part)
    if not anchor and not parts:
        return "."
    return str(cls(anchor, *parts))


@_cached
def join(base: str, relative: str) -> str | None:
    """`relative` (either separator) resolved against `base`, in base's spelling."""
    cls = flavour(base)
    return normalise(str(cls(base, *segments(relative))))


def only_climbs(relative: str) -> bool:
    """A relative path to a git directory that only goes up (`.git`, `../.git`, `..\\..\\.git`):
    the repository is an ancestor of (or is) the directory aider was started in."""
    names = segments(relative)
    if ".git" in names:
        names = names[: names.index(".git")]
    return all(n in (".", "..") for n in names)


@_cached
def repository_of_git_dir(git_dir: str) -> str | None:
    """The working tree a git directory belongs to: `<x>/.git` → x; a worktree's admin
    directory `<main>/.git/worktrees/<name>` → main; any other git directory stands for
    itself (a bare repository)."""
    path = normalise(git_dir)
    if path is None:
        return None
    names = segments(path)
    if ".git" not in names:
        return path
    index = len(names) - 1 - names[::-1].index(".git")
    if index == len(names) - 1 or names[index + 1] == "worktrees":
        cls = flavour(path)
        anchor = cls(path).anchor
        kept = names[:index]
        if not kept and not anchor:
            return "."
        return str(cls(anchor, *kept))
    return path


@_cached
def worktree_name(git_dir: str) -> str | None:
    """The worktree's name when `git_dir` is a worktree's admin directory."""
    names = segments(git_dir)
    if len(names) >= 3 and names[-3] == ".git" and names[-2] == "worktrees":
        return names[-1]
    return None


@_cached
def name_of(path: str | None) -> str | None:
    """The repository's directory name: what a person calls the project."""
    if not path:
        return None
    names = segments(path)
    return names[-1] if names and names[-1] not in (".", "..") else None


# A remote as git prints it: `origin\t<url> (fetch)` (`git remote -v`), `To <url>` (`git push`).
_REMOTE = re.compile(
    r"^(?:origin\s+(\S+)\s+\(fetch\)|To\s+((?:https?://|ssh://|git@|[\w.-]+:)\S+))\s*$", re.M
)


# A command that sets the remote a repository pushes to: `git remote add origin <url>`.
_ORIGIN_SET = re.compile(
    r"^\(?\s*git\s+remote\s+(?:add|set-url)\s+(?:-\S+\s+)*origin\s+['\"]?"
    r"((?:https?://|ssh://|git@)[^\s'\"()]+)"
)


def _repository_name(url: str) -> str | None:
    """`git@github.com:me/config_files.git` → `config_files`."""
    name = re.split(r"[/:]", url.rstrip("/"))[-1].removesuffix(".git")
    return name if name and name not in (".", "..") else None


def remote_names(text: str) -> list[str]:
    """The names of the repositories a command's output shows as its remote
    (`git@github.com:me/config_files.git` → `config_files`)."""
    found = (_repository_name(m.group(1) or m.group(2)) for m in _REMOTE.finditer(text))
    return [name for name in found if name]


def origin_set(command: str) -> str | None:
    """The name of the repository a git command sets as the origin of the one it runs in
    (`git remote add origin git@github.com:me/shop.git` → `shop`); None where the command is
    not git's own (`echo git remote add …`)."""
    m = _ORIGIN_SET.search(command.strip())
    return _repository_name(m.group(1)) if m else None


_WORKTREE_ADMIN = re.compile(r"[\\/]\.git[\\/]worktrees[\\/]([^\s'\"`<>|\\/]+)")
_PATH_START = re.compile(r"(?:[A-Za-z]:)?[\\/]")
_PATH_STOPS = frozenset(" \t\r\n\f\v'\"`<>|:")


def main_repository_in(text: str, worktree: str) -> str | None:
    """The main repository of the worktree directory `worktree`, if `text` (a command's output, a
    `.git` file's content) names the worktree's admin directory `<main>/.git/worktrees/<name>`
    with the worktree's own name. Each `.git/worktrees/` found is followed back to where its path
    starts: the text is read once, whatever runs of separators it holds."""
    if ".git" not in text:
        return None
    name = name_of(worktree)
    for match in _WORKTREE_ADMIN.finditer(text):
        if match.group(1) != name:
            continue
        start = match.start()
        while start > 0 and text[start - 1] not in _PATH_STOPS:
            start -= 1
        if start >= 2 and text[start - 1] == ":" and text[start - 2].isalpha():
            start -= 2  # a drive letter: `C:\\…`
        head = text[start : match.start()]
        first = _PATH_START.search(head)
        if first is not None:
            return normalise(head[first.start() :])
    return None


# A line of `git worktree list`: the worktree's folder, then its commit and branch (or `(bare)`
# for a bare main repository); `--porcelain` writes `worktree <folder>` lines instead.
_WORKTREE_LINE = re.compile(
    r"^(?:worktree (?P<porcelain>\S.*?)|(?P<folder>\S.*?)\s+(?:[0-9a-f]{7,40}\s+"
    r"(?:\[[^\]\n]*\]|\(detached HEAD\))|\(bare\)))\s*(?:locked|prunable)?\s*$",
    re.MULTILINE,
)


def main_worktree_listed(text: str, cwd: str) -> str | None:
    """The main repository, where `text` is the output of `git worktree list` and `cwd` is in
    one of the linked worktrees it lists: git lists the main worktree first (a bare repository's
    `<repo>/.bare` or `<repo>.git` stands for `<repo>`)."""
    listed = (
        normalise(m.group("porcelain") or m.group("folder") or "")
        for m in _WORKTREE_LINE.finditer(text[:20_000])
    )
    folders = [f for f in listed if f is not None and is_absolute(f)]
    holding = [f for f in folders if is_within(cwd, f)]
    if len(folders) < 2 or not holding:
        return None
    main = folders[0]
    if max(holding, key=lambda f: len(segments(f))) == main:
        return None  # the session is in the main worktree itself
    name = name_of(main) or ""
    if name == ".bare":
        return str(flavour(main)(main).parent)
    if name.endswith(".git") and name != ".git":
        return main[: -len(".git")]
    return main


# Where tools that make worktrees put them: folders, and whether the repository's folder comes
# before them (`<repo>/.claude/worktrees/<name>`, Claude Code's own; `<repo>/.worktrees/<name>`,
# where worktree skills and scripts keep them) or right after them
# (`conductor/workspaces/<repo>/<name>`, `~/.cursor/worktrees/<repo>/<name>`: Conductor and Cursor
# do not show the main repository's path, and the folder named as it stands for it).
_WORKTREE_LAYOUTS: tuple[tuple[tuple[str, ...], bool], ...] = (
    ((".claude", "worktrees"), False),
    ((".worktrees",), False),
    (("conductor", "workspaces"), True),
    ((".cursor", "worktrees"), True),
)


def worktree_main(cwd: str) -> str | None:
    """The repository a directory inside a worktree belongs to, where the worktree sits in a
    layout a worktree tool makes (see `_WORKTREE_LAYOUTS`; the innermost one where layouts
    nest); None elsewhere."""
    names = segments(cwd)
    best: int | None = None
    for folders, repo_after in _WORKTREE_LAYOUTS:
        n = len(folders)
        for i in range(len(names) - n + 1):
            if tuple(names[i : i + n]) != folders:
                continue
            kept = i + n + 1 if repo_after else i  # names up to the repository's folder
            if kept > 0 and kept + (1 if repo_after else n + 1) <= len(names):
                best = kept if best is None else max(best, kept)
    if best is None:
        return None
    cls = flavour(cwd)
    return str(cls(cls(cwd).anchor, *names[:best]))


def above_hidden(cwd: str) -> str | None:
    """The folder holding the first hidden folder of `cwd` (`<repo>/.claude/skills/optimize`:
    `<repo>`), where that could be a project's: a tool keeps its own files in a hidden folder of
    the project it is used in. None where no folder of `cwd` is hidden, or the one holding it is
    an account's (`~/.config/nvim` is a repository of its own, or the home directory's)."""
    names = segments(cwd)
    hidden = next(
        (i for i, n in enumerate(names) if n.startswith(".") and n not in (".", "..")), None
    )
    if hidden is None:
        return None
    cls = flavour(cwd)
    folder = str(cls(cls(cwd).anchor, *names[:hidden]))
    return folder if could_be_project(folder) else None


# The names git gives a repository's first branch: a worktree folder of a bare clone's layout
# (`<repo>/.bare` beside `<repo>/main`, `<repo>/feature-x`) is named after the branch it was made
# for, and keeps that name when the worktree goes on to another branch.
_FIRST_BRANCHES = ("main", "master")
# Folders of worktrees inside a repository: `<repo>/worktree/<branch>`, `<repo>/worktrees/<branch>`.
_WORKTREE_FOLDERS = frozenset({"worktree", "worktrees", ".worktrees"})
# A folder of worktrees beside its repository, named after it: `<repo>-worktrees/<branch>`.
_WORKTREE_SUFFIXES = ("-worktrees", "_worktrees", ".worktrees")


def branch_worktree_main(cwd: str, branches: Iterable[str]) -> str | None:
    """The repository of a worktree named after a branch: the folder above `<repo>/main`, or
    above `<repo>/feat/x` for branch `feat/x` (the session's branches, or a first branch's name,
    as the cwd's last folders); or the folder above a folder of worktrees that holds one named
    after one of the session's branches, anywhere in the cwd (`<repo>/worktree/<branch>/web`),
    or the repository beside a folder of worktrees named after it (`<repo>-worktrees/<branch>`).
    None where no folder is named so."""
    names = segments(cwd)
    cls = flavour(cwd)

    def above(end: int) -> str:
        return str(cls(cls(cwd).anchor, *names[:end]))

    tails = [[n for n in b.split("/") if n] for b in branches]
    for tail in (t for t in tails if t):
        for i in range(len(names) - len(tail), 1, -1):  # the innermost first
            if names[i : i + len(tail)] != tail:
                continue
            if names[i - 1] in _WORKTREE_FOLDERS:
                return above(i - 1)
            folder = names[i - 1]
            for suffix in _WORKTREE_SUFFIXES:
                if folder.endswith(suffix) and len(folder) > len(suffix):
                    return str(cls(cls(cwd).anchor, *names[: i - 1], folder[: -len(suffix)]))
    for tail in [*tails, *([b] for b in _FIRST_BRANCHES)]:
        if tail and len(names) > len(tail) and names[-len(tail) :] == tail:
            return above(len(names) - len(tail))
    return None


@_cached
def _marked_folders(cwd: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The folder `cwd` and those above it (an account folder and the root left out), each with
    the spellings of its path followed by a separator that a text may show."""
    names = segments(cwd)
    cls = flavour(cwd)
    seps = ("\\", "/") if is_windows(cwd) else ("/",)
    found = []
    for end in range(len(names), 0, -1):
        folder = str(cls(cls(cwd).anchor, *names[:end]))
        if is_account_folder(folder):
            break
        found.append(
            (
                folder,
                tuple(folder.replace("\\", "/") + "/" if s == "/" else folder + s for s in seps),
            )
        )
    return tuple(found)


# Claude Code keeps a repository's memory in `~/.claude/projects/<folder>/memory/`, `<folder>`
# being the path of the repository's root (its git root; a worktree's main repository) with each
# character but an ASCII letter or digit written `-`.
_NOT_KEPT_IN_NAME = re.compile(r"[^A-Za-z0-9]")
_MEMORY_FOLDER = re.compile(r"[\\/]projects[\\/]([A-Za-z0-9-]+)[\\/]memory\b")


def memory_folder_name(folder: str) -> str:
    """The name of the folder Claude Code keeps the memory of a repository rooted at `folder`
    in."""
    return _NOT_KEPT_IN_NAME.sub("-", folder)


def root_marks(text: str, cwd: str) -> list[tuple[str, bool]]:
    """(folder, whether its `.git` shows) for `cwd` and each folder above it whose `.git` or
    `.gitignore` the text shows by absolute path, or whose memory folder Claude Code keeps (as
    the repository's root: as its `.git` would): where a repository's root may be. A `.git`
    path of a submodule or a worktree (`.git/modules/`, `.git/worktrees/`) marks nothing."""
    if not is_absolute(cwd):
        return []
    marks = []
    if "memory" in text:
        # a Windows drive's letter is written in either case (`c--Users-…`, `C--Users-…`)
        fold = str.casefold if is_windows(cwd) else str
        kept = {fold(m.group(1)) for m in _MEMORY_FOLDER.finditer(text)}
        marks += [(f, True) for f, _ in _marked_folders(cwd) if fold(memory_folder_name(f)) in kept]
    if ".git" not in text:
        return marks
    for folder, spellings in _marked_folders(cwd):
        for prefix in spellings:
            at = text.find(prefix + ".git")
            while at >= 0:
                rest = text[at + len(prefix) + 4 : at + len(prefix) + 14]
                if rest.startswith("ignore"):
                    marks.append((folder, False))
                    break
                if rest[:1] in ("/", "\\", "", " ", "'", '"', "\n") and not rest[1:].startswith(
                    ("modules", "worktrees")
                ):
                    marks.append((folder, True))
                    break
                at = text.find(prefix + ".git", at + 1)
    return marks


def folder_key(path: str | None, windows: bool) -> str | None:
    """A folder's path as folders are compared: without case on Windows (`c:\\x` is `C:\\X`)."""
    return path.casefold() if path and windows else path


def _compared_names(path: str) -> list[str]:
    """A path's names as folders are compared (without case on Windows)."""
    windows = is_windows(path)
    return [n.casefold() if windows else n for n in segments(path)]


def is_within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies below it (Windows names compared without case)."""
    if is_windows(path) != is_windows(folder) or is_absolute(path) != is_absolute(folder):
        return False
    inner, outer = segments(path), segments(folder)
    if is_windows(folder):
        inner, outer = [n.casefold() for n in inner], [n.casefold() for n in outer]
    return inner[: len(outer)] == outer


# Folders every account has, where people start a tool without being in a repository: the home
# directory (`/Users/<name>`, `/home/<name>`, `C:\Users\<name>`, WSL's `/mnt/c/Users/<name>`,
# `/root`) and the folders the system makes in it for the desktop, documents and downloads.
# A Claude desktop (Cowork) session runs in a virtual machine whose home for it is
# `/sessions/<name>`, a name Cowork makes (`adoring-cool-einstein`, `rcw-01toqkmz1tbre…`): the
# folders the person connects are mounted in its `mnt/`, beside Cowork's own `mnt/outputs` and
# `mnt/uploads`, so the work is in a folder there, as in a home directory's. A folder of another
# name in `/sessions` is anyone's (a repository kept there).
_SESSION_HOME = ("sessions",)
_SESSION_NAME = re.compile(r"^(?:[a-z]+-[a-z]+-[a-z]+|[a-z]{2,5}-[0-9a-z]{16,})$")
_SESSION_FOLDERS = frozenset({(), ("mnt",), ("mnt", "outputs"), ("mnt", "uploads")})
_HOMES = (("Users",), ("home",), ("mnt", None, "Users"), _SESSION_HOME)
_ACCOUNT_FOLDERS = frozenset({"Desktop", "Documents", "Downloads"})


def _other_sessions_folder(prefix: tuple[str | None, ...], names: list[str]) -> bool:
    """A folder in `/sessions` that is not a Cowork session's home (see `_SESSION_NAME`)."""
    return prefix == _SESSION_HOME and not (len(names) > 1 and _SESSION_NAME.match(names[1]))


# Homes at a fixed place, with no account's name in them: root's, and Termux's on Android.
_FIXED_HOMES = (("root",), ("data", "data", "com.termux", "files", "home"))


def _fixed_home(names: list[str]) -> tuple[str, ...] | None:
    """The fixed home (`_FIXED_HOMES`) a path's names start with, or None."""
    return next((h for h in _FIXED_HOMES if tuple(names[: len(h)]) == h), None)


def is_account_folder(path: str) -> bool:
    """Whether `path` is a home directory or a folder the system makes in it, a file system's
    root, or Windows' own folder (`C:\\Windows\\System32`, where an administrator's terminal
    opens): a place a tool is started in, not a repository."""
    if not is_absolute(path):
        return False
    if _is_system_folder(path):
        return True
    windows = is_windows(path)
    names = _compared_names(path)
    if not windows and (fixed := _fixed_home(names)):
        below = names[len(fixed) :]
        return not below or (len(below) == 1 and below[0] in _ACCOUNT_FOLDERS)
    for prefix in (("users",),) if windows else _HOMES:
        n = len(prefix)
        if (
            len(names) <= n
            or any(p is not None and p != q for p, q in zip(prefix, names[:n], strict=True))
            or _other_sessions_folder(prefix, names)
        ):
            continue
        below = names[n + 1 :]  # below the account's own folder
        if prefix == _SESSION_HOME:
            return tuple(below) in _SESSION_FOLDERS
        folders = {f.casefold() for f in _ACCOUNT_FOLDERS} if windows else _ACCOUNT_FOLDERS
        return not below or (len(below) == 1 and below[0] in folders)
    return False


# Where toolchains keep code that is no one's repository: installed packages and modules (Python,
# Node, Rust, Ruby, Go, the JVM's), toolchains' own folders, and the system's trees.
_LIBRARY_FOLDERS = frozenset(
    {"site-packages", "dist-packages", "node_modules", ".cargo", ".rustup", ".pyenv", ".rbenv"}
    | {".nvm", ".gem", ".gradle", ".m2", ".cache"}
)
_SYSTEM_TREES = frozenset({"usr", "nix", "rustc", "System", "Library"})  # `/usr/lib/…`, `/rustc/…`
_PYTHON_HOME = re.compile(r"^python\d+(?:\.\d+)?$", re.IGNORECASE)  # lib/python3.11, C:\Python311


def is_library_path(path: str) -> bool:
    """A file of an installed library or a language's own (`…/site-packages/x.py`,
    `/usr/lib/python3.11/http/server.py`, `~/go/pkg/mod/…`, `~/.cargo/registry/…`), or of
    what programs keep in the account (`~/Library/Python/3.9/bin/yt-dlp`, `AppData`), not a
    repository's: an error's frames there say nothing of where the work is."""
    names = segments(path)
    if not names or _LIBRARY_FOLDERS.intersection(names):
        return True
    if not is_windows(path) and (names[0] in _SYSTEM_TREES or names[:2] == ["opt", "homebrew"]):
        return True
    # what programs keep in the account: macOS's `~/Library`, Windows' `AppData`
    kept_by_programs = "AppData" if is_windows(path) else "Library" if names[0] == "Users" else ""
    home = home_of(path)
    if home is not None and names[len(segments(home)) : -1][:1] == [kept_by_programs]:
        return True
    if _PYTHON_HOME.match(names[0]):
        return True  # C:\\Python311\\Lib\\…
    for above, name in itertools.pairwise(names):
        # a Python's standard library (`lib/python3.11`, `…\\Python\\Python311`), Go's modules
        if (above.casefold() in ("lib", "python") and _PYTHON_HOME.match(name)) or (
            above == "pkg" and name == "mod"
        ):
            return True
    return False


def is_named_home(path: str) -> bool:
    """Whether `path` is a home directory named after its account (`/home/riskbot`,
    `/Users/ann`, `C:\\Users\\Ann`), not root's, Termux's or a Cowork session's, whose names
    are no one's choice."""
    if not is_absolute(path) or home_of(path) != normalise(path):
        return False
    names = tuple(segments(path))
    return is_windows(path) or (_fixed_home(list(names)) is None and names[:1] != _SESSION_HOME)


def home_of(path: str) -> str | None:
    """The home directory `path` lies in (`/Users/<name>`, `/home/<name>`, `/root`, Termux's,
    `C:\\Users\\<name>`, a Cowork session's `/sessions/<name>`), or None: what `~` stood for in
    a shell there. (Under WSL's
    `/mnt/c/Users/<name>`, `~` is the Linux home, which the path does not show.)"""
    if not is_absolute(path):
        return None
    windows = is_windows(path)
    names = segments(path)
    folded = [n.casefold() for n in names] if windows else names
    if not windows and (fixed := _fixed_home(folded)):
        return "/" + "/".join(fixed)
    for prefix in (("users",),) if windows else (*_HOMES[:2], _SESSION_HOME):
        n = len(prefix)
        if (
            len(names) > n
            and all(p is None or p == q for p, q in zip(prefix, folded[:n], strict=True))
            and not _other_sessions_folder(prefix, folded)
        ):
            cls = flavour(path)
            return str(cls(cls(path).anchor, *names[: n + 1]))
    return None


_GIT_BASH_DRIVE = re.compile(r"^/([A-Za-z])(?:/|$)")


def resolve(path: str, cwd: str | None) -> str | None:
    """A path typed in a shell whose working directory was `cwd`: absolute, `~`-relative or
    relative to cwd (Git Bash's `/c/…` is `C:\\…` where cwd is a Windows path); None where it
    cannot be told: the shell expands it (`$DIR`, a backquote, `~user`) or it is `-`."""
    text = path.strip().strip("\"'")
    if not text or text == "-" or "$" in text or "`" in text:
        return None
    if cwd and is_windows(cwd) and (drive := _GIT_BASH_DRIVE.match(text)):
        text = f"{drive.group(1).upper()}:\\" + text[drive.end() :]
    if text.startswith("~") and not (text == "~" or text.startswith(("~/", "~\\"))):
        return None  # another account's home
    if text == "~" or text.startswith(("~/", "~\\")):
        home = home_of(cwd) if cwd else None
        return join(home, text[1:]) if home else None
    if is_absolute(text):
        return normalise(text)
    return join(cwd, text) if cwd and is_absolute(cwd) else None


def folder_worked_in(cwd: str, edited: list[str]) -> str | None:
    """The folder inside `cwd` the session's edits (absolute paths) are in: the folder directly
    inside it most edits fall in, hidden folders (a tool's own, such as `~/.claude/plans`) left
    out, and below that again while it is itself an account folder (`~/Desktop/app` from `~`);
    None when no edit is in one. From a file system's root or Windows' own folder, the edits
    are looked for from the root, past the folders that hold home directories (`/home`,
    `C:\\Users`)."""
    if _is_system_folder(cwd):
        cwd = str(flavour(cwd)(flavour(cwd)(cwd).anchor))
    folder = _busiest_folder(cwd, edited)
    while folder is not None and (is_account_folder(folder) or _holds_homes(folder)):
        inner = _busiest_folder(folder, edited)
        if inner is not None and len(segments(inner)) <= len(segments(folder)):
            return None  # a name that resolves to no folder below (`~/'/x`): no deeper to go
        folder = inner
    return folder


def project_edited(cwd: str, edited: list[str]) -> str | None:
    """The folder worked in (`folder_worked_in`) by the edits, and in a folder that holds
    projects (`~/projects`) the one in it most edits are in: `~/projects/axiom`."""
    folder = folder_worked_in(cwd, edited)
    if folder is not None and _holds_projects(folder):
        inner = _busiest_folder(folder, edited)
        if inner is not None and len(segments(inner)) > len(segments(folder)):
            return inner
    return folder


# Folders a person keeps projects in, directly in the home or one of its account folders
# (`~/projects/axiom`, `~/Documents/GitHub/site`)
_PROJECT_HOLDERS = frozenset(
    {"projects", "code", "dev", "repos", "repositories", "src", "git", "github", "workspace"}
    | {"workspaces", "developer", "development", "sites", "coding"}
)


def _holds_projects(folder: str) -> bool:
    """Whether `folder` is one a person keeps projects in (`~/projects`, `~/Documents/GitHub`),
    by its name, directly in a home directory or an account folder."""
    names = segments(folder)
    parent = join(folder, "..")
    return (
        bool(names)
        and names[-1].casefold() in _PROJECT_HOLDERS
        and (parent is not None and is_account_folder(parent) and not _is_system_folder(parent))
    )


# A folder's path as a person types it in a request: a drive's (`C:\\x\\y`), `~`'s or the
# root's (`/home/me/app`), not inside a word or an address (`https://host/x`, `a/b`).
_TYPED_FOLDER = re.compile(r"[A-Za-z]:\\[^\s'\"`<>|?*,;]+|(?<![\w.:/~\\-])~?/[\w.-]+(?:/[\w.-]+)+")
_SCRATCH_TREES = frozenset({"tmp", "etc", "var", "proc", "dev", "sys", "bin", "sbin", "private"})


def paths_typed(text: str, cwd: str) -> list[str]:
    """The absolute (or `~`) paths a text names, as typed in a request or a shell command."""
    found = (resolve(m.group().rstrip(".\\/"), cwd) for m in _TYPED_FOLDER.finditer(text))
    return [path for path in found if path is not None]


def folders_named(text: str, cwd: str) -> list[str]:
    """The folders a request names by an absolute (or `~`) path: a path whose last name has no
    extension, that could be a project's (`could_be_project`), on the machine the session ran
    on: a POSIX path in a request typed on Windows (Git Bash's `/c/…` aside) is text pasted
    from elsewhere, such as a script's regular expression (`.replace(/ERR_BLOCKED/g, '')`)."""
    windows = is_windows(cwd)
    return [
        path
        for path in paths_typed(text, cwd)
        if could_be_project(path)
        and "." not in segments(path)[-1]
        and (is_windows(path) or not windows)  # a Windows folder from WSL is the person's too
    ]


def distinct_folders(paths: Iterable[str], start: str) -> list[str]:
    """The folders among `paths` other than `start`, normalised, each once (Windows folders
    compared without case), in the order first seen."""
    windows = is_windows(start)
    begun = folder_key(normalise(start) or start, windows)
    folders: dict[str | None, str] = {}
    for path in paths:
        if (normal := normalise(path)) is not None:
            folders.setdefault(folder_key(normal, windows), normal)
    folders.pop(begun, None)
    return list(folders.values())


def could_be_project(folder: str) -> bool:
    """Whether an absolute folder could be a project's: at least two names deep, outside
    account, system, library and scratch folders (`/tmp`, `/etc`) and hidden ones (a tool's
    own, `~/.config/x`)."""
    names = segments(folder)
    served = len(names) > 2 and names[:2] == ["var", "www"]  # a site's folder on a web server
    return not (
        len(names) < 2
        or (names[0] in _SCRATCH_TREES and not served)
        or any(n.startswith(".") for n in names)
        or is_account_folder(folder)
        or is_library_path(folder)
    )


def _is_system_folder(path: str) -> bool:
    """A file system's root, or Windows' own folder and what is in it."""
    if not is_absolute(path):
        return False
    names = segments(path)
    return not names or (is_windows(path) and names[0].casefold() == "windows")


def _holds_homes(folder: str) -> bool:
    """`/home`, `/Users`, `C:\\Users`, `/mnt`, `/mnt/c`, `/mnt/c/Users`, `/sessions`: folders above
    homes."""
    names = _compared_names(folder)
    for prefix in (("users",),) if is_windows(folder) else _HOMES:
        if 0 < len(names) <= len(prefix) and all(
            p is None or p == q for p, q in zip(prefix, names, strict=False)
        ):
            return True
    return False


def written_by_tool(path: str) -> bool:
    """A plan Claude Code wrote in its own folder by itself (`~/.claude/plans/…`): no edit of
    the person's."""
    names = segments(path)
    return any(names[i : i + 2] == [".claude", "plans"] for i in range(len(names) - 1))


def hidden_folder_edited(start: str, edited: list[str]) -> str | None:
    """The one hidden folder of a home directory that every edit lies in (`~/.claude`, a tool's
    configuration the person worked on: its agents, skills, settings), or None. The home is the
    folder the session started in, or, where that is a system folder (Windows' own, where an
    administrator's terminal opens, or a file system's root), the one home every edit lies in.
    Plans Claude Code writes there itself are not edits of the person's."""
    home = (_one_home(edited) if _is_system_folder(start) else None) or start
    depth = len(segments(home))
    windows = is_windows(home)
    found: dict[str, str] = {}  # the folder as compared (Windows: without case) → as written
    for path in edited:
        names = segments(path)
        if not is_within(path, home) or len(names) <= depth + 1:
            return None
        folder = names[depth]
        if folder[:1] != "." or folder in (".", ".."):  # `~/../you` climbs out, hides nothing
            return None
        if not written_by_tool(path):
            found.setdefault(folder.casefold() if windows else folder, folder)
    return join(home, next(iter(found.values()))) if len(found) == 1 else None


def _one_home(paths: list[str]) -> str | None:
    """The one home directory all `paths` lie in (Windows names compared without case), or None."""
    home = home_of(paths[0]) if paths else None
    return home if home is not None and all(is_within(p, home) for p in paths) else None


def project_edited_outside(home: str, edited: list[str]) -> str | None:
    """The one project folder outside a home directory that the edits made there lie in: a site
    or a service a server keeps (`/var/www/<site>`, `/srv/<name>`, `/opt/<name>`), or the folder
    in another home the edits are in (`/mnt/c/Users/me/app` from WSL's home); the system's
    configuration (`/etc`), scratch space and what else lies outside aside. From the home folder
    of a server's account: its application, worked on in place."""
    found: set[str] = set()
    for path in edited:
        if not is_absolute(path) or is_within(path, home):
            continue
        if (folder := _served_folder(path) or _folder_in_a_home(path)) is not None:
            found.add(folder)
    return found.pop() if len(found) == 1 else None


# Where a server keeps sites and services outside the homes
_SERVED_ROOTS = (("var", "www"), ("srv",), ("opt",))


def _served_folder(path: str) -> str | None:
    """`/var/www/<site>`, `/srv/<name>` or `/opt/<name>` that `path` lies below, if any."""
    if is_windows(path):
        return None
    names = segments(path)
    for root in _SERVED_ROOTS:
        n = len(root)
        if tuple(names[:n]) == root and len(names) > n + 1 and not names[n].startswith("."):
            folder = "/" + "/".join(names[: n + 1])
            return None if is_library_path(folder) else folder
    return None


def _folder_in_a_home(path: str) -> str | None:
    """The folder directly inside the home directory `path` lies in (past the account's own
    folders, `Desktop`), where it lies in one."""
    cls = flavour(path)
    names, anchor = segments(path), cls(path).anchor
    for n in range(1, len(names)):
        folder = normalise(str(cls(anchor, *names[:n])))
        if folder and is_account_folder(folder):
            return folder_worked_in(folder, [path])
    return None


def _busiest_folder(cwd: str, edited: list[str]) -> str | None:
    """The folder directly inside `cwd` that the most edits are in, or None."""
    windows = is_windows(cwd)

    def key(names: list[str]) -> list[str]:
        return [n.casefold() for n in names] if windows else names  # `c:\\users` is `C:\\Users`

    base = key(segments(cwd))
    counts: Counter[str] = Counter()
    for path in edited:
        if not is_absolute(path) or is_windows(path) != windows or is_library_path(path):
            continue
        names = segments(path)
        if len(names) > len(base) + 1 and key(names[: len(base)]) == base:
            folder = names[len(base)]
            if not folder.startswith(".") and folder.strip(" \"'"):  # not `'` or ` ` alone
                counts[folder] += 1
    busiest = counts.most_common(1)  # the first seen among equals
    return join(cwd, busiest[0][0]) if busiest else None
