"""Where an aider session's repository is, from what the session printed (see
`SessionRepository.root`): aider's own lines (`Git repo:`, `Git working dir:`, files it added,
git commands of its that failed), the files it names, and for a history moved away from its
repository's root, the absolute paths the session shows elsewhere (errors, files added
read-only, files aider could not decode, the virtual environment aider was run from, `/run cd`).
Paths are read lexically (`repository.py`): the machine that wrote them is not this one."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from yzos_jobs.importers import repository as repo


class FileRepository(Protocol):
    """What the history file's other sessions show (`aider_history.FileRoot`)."""

    def __call__(self) -> str | None:
        """The repository a session shows, placing the history at its root, or None."""

    def moved(self) -> str | None:
        """Where the sessions show a moved history's repository is, or None."""


HISTORY_FLAG = re.compile(r"--chat-history-file(?:=|\s+)(\S+)")
# A file's absolute path in an error pasted at the prompt or printed: a Python traceback's `File
# "/abs/my app.py", line 3` (the quoted path whole, spaces and all), or `/abs/app.ts:3:5`
# (compilers, linters, Node's stack frames).
ERROR_PATH = re.compile(
    r"File \"((?:[A-Za-z]:)?[\\/][^\"\n]+)\", line \d"
    r"|(?<![^\s(\"'`])((?:[A-Za-z]:)?[\\/][^\s\"'`():*?<>|]+)(?:\", line \d|:\d)"
)
# aider run from the project's own virtual environment, which sits in the project's folder:
# `C:\Users\me\app\.venv\Scripts\aider …`, `/home/me/app/venv/bin/python -m aider …`
VENV_COMMAND = re.compile(
    r"^((?:[A-Za-z]:)?[\\/]\S*?)[\\/]\.?venv[\\/](?:bin|Scripts)[\\/]"
    r"(?:aider|python[\d.]*)(?:\.exe)?(?:\s|$)"
)
MIN_RUN_DIR_DEPTH = 3  # `/home/me/project`; a shallower directory (`/tmp`) is no repository's
MAX_PATHS = 20  # file names kept per /add, and paths per kind, as evidence of the repository
# Files added to the chat (or created) kept per session: a path printed later pairs with any of
# them (`Added f25.py`, then `/home/me/proj/f25.py: …`); the bound holds a history that adds
# thousands of files to what one session of a person's holds.
MAX_ADDED_FILES = 1000


@dataclass
class SessionRepository:
    """What a session shows about its repository."""

    git_repo: str | None = None
    cur_dir: str | None = None
    work_dir: str | None = None
    command: str | None = None
    git_path: str | None = None  # an absolute `…/.git` path in aider's output
    # Files as named: absolute paths aider printed for files it added or created, absolute
    # paths the user gave `/add`; names aider printed relative to the repository's root; names
    # the user gave `/add` relative to where aider runs.
    printed_paths: list[str] = field(default_factory=list)
    given_paths: list[str] = field(default_factory=list)
    root_names: list[str] = field(default_factory=list)
    given_names: list[str] = field(default_factory=list)
    inside_paths: list[str] = field(default_factory=list)  # absolute, somewhere in the repository
    # Absolute paths of files the session shows without working on them, perhaps in the
    # repository, perhaps elsewhere: named by an error (pasted or printed), added read-only
    # (a conventions file, an older project's code: weaker evidence).
    error_paths: list[str] = field(default_factory=list)
    read_only_paths: list[str] = field(default_factory=list)
    edited_names: list[str] = field(default_factory=list)  # as aider printed them: from the root
    # Absolute directories the user changed into in a `/run` command: the repository or a
    # folder in it, unless the command left it.
    run_dirs: list[str] = field(default_factory=list)

    def add_read_only(self, path: str) -> None:
        keep_path(self.read_only_paths, path)

    def add_error_paths(self, text: str) -> None:
        """The files an error in `text` names by their absolute path (the first few)."""
        for m in ERROR_PATH.finditer(text):
            if len(self.error_paths) >= MAX_PATHS:
                break
            keep_path(self.error_paths, m.group(1) or m.group(2))

    @property
    def venv_folder(self) -> str | None:
        """The folder whose virtual environment aider was run from (`/home/me/app` for
        `/home/me/app/.venv/bin/aider`), where it is deep enough to be a repository."""
        m = VENV_COMMAND.match(self.command or "")
        if m is None or not deep_enough(m.group(1)):
            return None
        return repo.normalise(m.group(1))

    @property
    def history_flag(self) -> str | None:
        m = HISTORY_FLAG.search(self.command or "")
        return m.group(1) if m else None

    def shown(self) -> str | None:
        """The repository the session shows by itself, or None."""
        git = self.git_repo if self.git_repo and self.git_repo.lower() != "none" else None
        if git and repo.worktree_name(git):
            base = git if repo.is_absolute(git) else None
            # a worktree's root, where aider ran: printed, or under the files it names
            start = self.cur_dir or self.work_dir or self._named_root()
            if base is None and start and repo.is_absolute(start):
                base = repo.join(start, git)
            if base:
                return repo.repository_of_git_dir(base)
        if self.work_dir and repo.is_absolute(self.work_dir):
            return repo.normalise(self.work_dir)
        if git and repo.is_absolute(git):
            return repo.repository_of_git_dir(git)
        if git and self.cur_dir and repo.is_absolute(self.cur_dir):
            joined = repo.join(self.cur_dir, git)
            return repo.repository_of_git_dir(joined) if joined else None
        if self.git_path:
            return repo.normalise(self.git_path)
        root = self._named_root()
        if root is not None:
            return root  # aider names a file relative to the root; its absolute path is known
        cwd = prefix(self.printed_paths, self.given_names)
        if cwd is not None and git:
            joined = repo.join(cwd, git)  # the user named a file relative to where aider ran
            return repo.repository_of_git_dir(joined) if joined else None
        return None

    def _named_root(self) -> str | None:
        """The directory under which an absolute path the session shows is a name aider gave
        relative to the root."""
        return prefix(self.printed_paths + self.given_paths, self.root_names + self.edited_names)

    def root(self, history: Path, file_root: FileRepository) -> str | None:
        """The repository, resolved as the module says."""
        shown = self.shown()
        if shown is not None:
            return shown
        flag = self.history_flag
        written_in = (
            repo.normalise(str(repo.join(flag, ".."))) if flag and repo.is_absolute(flag) else None
        )
        if written_in is None and at_repository_root(history):
            # the history is at a repository's root: a session that shows nothing was written
            # there, whatever folder the repository had when another session showed it (renamed
            # since, or the history synced from another machine)
            written_in = repo.normalise(str(history.parent))
        base = written_in or file_root()
        if base is None:
            here = repo.normalise(str(history.parent))
            moved = self.moved_root(history)
            # a session that shows nothing itself was written where the file's other sessions show
            base = moved if moved != here else (file_root.moved() or here)
        git = self.git_repo if self.git_repo and self.git_repo.lower() != "none" else None
        if base is None or git is None or repo.only_climbs(git):
            return base
        joined = repo.join(base, git)
        return repo.repository_of_git_dir(joined) if joined else base

    def moved_root(self, history: Path) -> str | None:
        """Where the history sits, unless it sits in no repository's root (no `.git` beside it)
        and the session printed absolute paths inside its repository that do not run through a
        folder of that name: then the history was moved (committed into another repository,
        or into a subfolder), and the repository is the one those paths show (the directory
        holding the first of them). Without such paths, and only where aider ran in a git
        repository: the directory under which files an error names or the session added
        read-only are files it named from the root (see `root_shown_by`), then the folder the
        repository's files aider printed spread out from (see `spread_root`), then the folder
        of the virtual environment aider was run from (`venv_folder`), then a directory the
        user changed into with `/run cd …` (see `root_above`), show it the same way."""
        here = repo.normalise(str(history.parent))
        if at_repository_root(history):
            return here
        folder = history.parent.name
        if self.inside_paths:
            for path in self.inside_paths:
                if folder in repo.segments(path)[:-1]:
                    return here  # the paths run through a folder of the history's own name
            return repo.join(self.inside_paths[0], "..")
        if self.git_repo is None or self.git_repo.lower() == "none":
            return here  # without git, a path elsewhere says nothing of a repository
        names = self.root_names + self.edited_names
        seen = root_shown_by(self.error_paths, self.read_only_paths, names)
        if seen is None:
            seen = spread_root(self.printed_paths)
        if seen is None:
            seen = self.venv_folder
        if seen is not None:
            return here if folder in repo.segments(seen) else seen
        if not self.run_dirs:
            return here
        for path in self.run_dirs:
            if folder in repo.segments(path):
                return here
        return root_above(self.run_dirs[0], self.root_names + self.edited_names)

    @property
    def at_history_root(self) -> bool:
        """aider placed the history itself (at the repository's root): no --chat-history-file."""
        return self.history_flag is None


def at_repository_root(history: Path) -> bool:
    """Whether a repository's `.git` sits beside the history: it is at that repository's root."""
    return (history.parent / ".git").exists()


def root_above(directory: str, names: list[str]) -> str | None:
    """The repository holding `directory`: the directory itself, or the ancestor under which
    its last folders are the first folders of a file named relative to the root (`cd
    /x/app/backend` and `backend/main.py` edited: `/x/app`)."""
    parts = repo.segments(directory)
    for name in names:
        folders = repo.segments(name)[:-1]
        # Climb only where the name goes on below the folders it shares with the directory (`cd
        # /x/app` with `app/core.py` is as likely the repository `app` holding a package `app`),
        # and never to a directory no repository is at (`/home/me`).
        top = min(len(folders) - 1, len(parts) - MIN_RUN_DIR_DEPTH)
        for k in range(top, 0, -1):
            if parts[-k:] == folders[:k]:
                return repo.join(directory, "/".join([".."] * k))
    return repo.normalise(directory)


def keep_path(paths: list[str], path: str) -> None:
    """Keep an absolute path a session showed, unless it is a library's (no repository's file),
    up to MAX_PATHS."""
    if len(paths) < MAX_PATHS and path not in paths and not repo.is_library_path(path):
        paths.append(path)


def root_shown_by(strong: list[str], weak: list[str], names: list[str]) -> str | None:
    """The directory under which the most files named from the root (`names`) are absolute paths
    a session showed: any of `strong` (an error's, a file aider added) says so; `weak` ones (added
    read-only: perhaps another project's) only with two names agreeing, or a name with a folder.
    Never a directory no repository is at (`/app`, `/home/me`), as with `/run cd`."""
    support: dict[str, tuple[set[str], bool]] = {}
    for strength, paths in ((True, strong), (False, weak)):
        tails = PathTails(paths)
        for name in names:
            for head in heads(tails, name):
                if deep_enough(head):
                    agreed, strong_before = support.get(head, (set(), False))
                    support[head] = (agreed | {name}, strong_before or strength)
    ranked = sorted(support.items(), key=lambda kv: -len(kv[1][0]))  # stable: the first of equals
    for head, (agreed, any_strong) in ranked:
        if any_strong or len(agreed) >= 2 or any(len(repo.segments(n)) >= 2 for n in agreed):
            return head
    return None


SPREAD_PATHS = 3  # files of the repository, in two folders or more, that show its root


def spread_root(paths: list[str]) -> str | None:
    """The folder absolute paths of the repository's files (aider printed them: files it added,
    created, or could not decode in its first scan of the repository) spread out from: their
    common folder, where at least SPREAD_PATHS of them go on into two folders of it or more
    (`/root/SERVER/data/…` and `/root/SERVER/client/…`: `/root/SERVER`). Files of one folder
    only show a folder somewhere in the repository, not its root."""
    if len(paths) < SPREAD_PATHS:
        return None
    windows = repo.is_windows(paths[0])
    cls = repo.flavour(paths[0])

    def key(name: str) -> str:
        return name.casefold() if windows else name

    anchors = {key(cls(p).anchor) for p in paths}
    if len(anchors) > 1 or any(repo.is_windows(p) != windows for p in paths):
        return None  # two drives, or two spellings: no one folder
    split = [repo.segments(p) for p in paths]
    common: list[str] = []
    for names in zip(*(parts[:-1] for parts in split), strict=False):
        if len({key(n) for n in names}) > 1:
            break
        common.append(names[0])
    going_on = [parts[len(common)] for parts in split if len(parts) > len(common) + 1]
    if len(going_on) < SPREAD_PATHS or len({key(n) for n in going_on}) < 2:
        return None
    root = str(cls(cls(paths[0]).anchor, *common))
    return root if deep_enough(root) else None


def deep_enough(directory: str) -> bool:
    """Deep enough to be a repository: a folder in a home directory (`/home/me/project`,
    `/root/project`), `D:\\Work\\project` (a drive is a root of its own); not `/app` (a
    container's), nor a home directory or its desktop."""
    if repo.is_account_folder(directory):
        return False
    if repo.home_of(directory) is not None:
        return True
    depth = MIN_RUN_DIR_DEPTH - 1 if repo.is_windows(directory) else MIN_RUN_DIR_DEPTH
    return len(repo.segments(directory)) >= depth


class PathTails:
    """Absolute paths by their last name (without case), each with its segments: a relative name
    is looked for only among the paths that end as it does, so matching many names against many
    paths costs what reading them does."""

    def __init__(self, paths: list[str]) -> None:
        self.by_last: dict[str, list[tuple[str, list[str]]]] = {}
        for path in paths:
            parts = repo.segments(path)
            if parts:
                self.by_last.setdefault(parts[-1].casefold(), []).append((path, parts))


def heads(tails: PathTails, name: str) -> Iterator[str]:
    """Each directory under which an absolute path of `tails` is the relative name `name`
    (Windows names compared without case), in the order the paths were given."""
    tail = repo.segments(name)
    if not tail or repo.is_absolute(name) or ".." in tail:
        return
    for path, parts in tails.by_last.get(tail[-1].casefold(), []):
        if len(parts) <= len(tail):
            continue
        end = parts[-len(tail) :]
        if repo.is_windows(path):
            same = [p.casefold() for p in end] == [t.casefold() for t in tail]
        else:
            same = end == tail
        if same:
            head = repo.join(path, "/".join([".."] * len(tail)))
            if head and repo.is_absolute(head):
                yield head


def prefix(paths: list[str], names: list[str]) -> str | None:
    """The directory under which an absolute path of `paths` is a relative name of `names` (the
    first name that has one)."""
    tails = PathTails(paths)
    for name in names:
        for head in heads(tails, name):
            return head
    return None
