"""A Claude Code session as the facts its transcript records give (`claude_transcript`), and the
repository it worked in: where it started, unless what it did shows the work was elsewhere (a
commit or a clone in another folder, a worktree's main repository, the root above a subfolder,
the folder a home-directory session edited in, made, went into or set an origin for)."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from yzos_jobs.importers import repository as repo
from yzos_jobs.importers.claude_transcript import Fact, TranscriptReader
from yzos_jobs.importers.closed_session import (
    ClosedSession,
    Commit,
    Event,
    FileTouched,
    Request,
)
from yzos_jobs.importers.reading import positioned_lines
from yzos_jobs.importers.shell_commands import MOVED_PATH_CHARS
from yzos_jobs.importers.transcript_groups import is_subagent


def _below(path: str, folder: str) -> bool:
    """Whether `path` lies strictly below `folder`."""
    return repo.is_within(path, folder) and not repo.is_within(folder, path)


def _root_of(start: str, marks: set[tuple[str, bool]]) -> str | None:
    """Of the folders above `start` that `marks` show (folder, whether by its `.git`), the
    innermost shown by its `.git`, else the outermost."""
    above = [m for m in marks if m[0] != start and repo.is_within(start, m[0])]
    depth = {folder: len(repo.segments(folder)) for folder, _ in above}
    if gits := [folder for folder, git in above if git]:
        return max(gits, key=depth.__getitem__)
    return min(depth, key=depth.__getitem__, default=None)


# The moves of a session followed (`TranscriptSession._where_kept`): each is compared with
# every edit, and a project gathered into a folder takes a few; a session of thousands of `mv`s (a
# hostile transcript) is followed only so far.
_MOVES_FOLLOWED = 100


def _compared(path: str) -> str:
    """A path as edits and moves are compared: normalised, `/`-separated, without case on
    Windows."""
    normal = repo.normalise(path) or path
    return (repo.folder_key(normal, repo.is_windows(normal)) or normal).replace("\\", "/")


# A file the session edited (`None`) or a manifest it wrote (the name it declares): its path, as
# compared (`_compared`), and that
_Tracked = tuple[str, str, str | None]


def _after_move(tracked: _Tracked, moved: str, to: str, key: str) -> _Tracked:
    """A file after `moved` (compared as `key`) went to `to`: the same place below `to`, where it
    lay at or below `moved`. A path that would grow past MOVED_PATH_CHARS stays where it was."""
    path, compared, declared = tracked
    if compared != key and not compared.startswith(key + "/"):
        return tracked
    below = repo.segments(path)[len(repo.segments(moved)) :]
    now = (repo.join(to, "/".join(below)) or path) if below else to
    if len(now) > MOVED_PATH_CHARS:
        return tracked
    return now, _compared(now), declared


@dataclass
class TranscriptSession:
    """The facts of one session (or of what was added to it since it was last closed)."""

    session_id: str
    file: Path
    facts: list[Fact] = field(default_factory=list)

    def project_path(self) -> str | None:
        cwd = next((f.cwd for f in self.facts if f.cwd), None)
        if cwd is None:
            return None
        shown = next((f.main_repository for f in self.facts if f.main_repository), None)
        cwd = self._committed_in(cwd) or self._cloned_into(cwd) or cwd
        found = (
            shown
            or repo.worktree_main(cwd)
            or self._branch_worktree_main(cwd)
            or self._root_above(cwd)
            or repo.above_hidden(cwd)
            or repo.normalise(cwd)
        )
        if found is None or not repo.is_account_folder(found):
            return self._made_in(found) or found
        # Started in the home directory or on the desktop: where it committed there, the home
        # directory is a repository (`/root` checked out), as it is where the session set a
        # project up in it (wrote its manifest there); else the work is in the folder there the
        # session edited files in (where the files ended up: a project it made or went into), or
        # ran git in. With none, a commit made there or the one remote its git showed says a
        # repository is there after all (dotfiles kept in git); else the folder its shell went
        # into, or the one its person's requests name, or the one it read, searched and named in
        # commands most; else the hidden folder every edit lies in (a tool's configuration worked
        # on); else no project.
        if self._committed_at(found) or self._origin_set_at(found) is not None:
            return found  # the home directory is the repository, wherever in it the edits are
        edited, manifests = self._where_kept()
        if self._start_branch() is not None and repo.is_named_home(found):
            own = (p for p in edited if repo.join(p, "..") == repo.normalise(found))
            if any(not (repo.name_of(p) or ".").startswith(".") for p in own):
                # a repository (Claude Code found its branch) whose own files the session edited
                # in the home directory itself: a service account's home that is its checkout
                return found
        worked_in = repo.project_edited(found, edited) or self._git_ran_in(found)
        if self._laid_out_in(found, worked_in, manifests):
            return found  # a project set up in the home directory itself
        kept_in_git = any(isinstance(f.event, Commit) for f in self.facts) or self._remote()
        if worked_in is None and kept_in_git:
            return found
        place = (
            worked_in
            or repo.project_edited_outside(found, edited)
            or self._shell_moved_to(found)
            or self._folder_named(found)
            or self._looked_into(found)
            or repo.hidden_folder_edited(found, edited)
        )
        return self._made_in(place) or place

    @staticmethod
    def _declared_at(folder: str, manifests: list[tuple[str, str]]) -> str | None:
        """The name the last of `manifests` (path, name) that lies directly in `folder`
        declares."""
        key = _compared(folder)
        names = [
            name
            for path, name in manifests
            if _compared(str(repo.flavour(path)(path).parent)) == key
        ]
        return names[-1] if names else None

    @staticmethod
    def _laid_out_in(home: str, worked_in: str | None, manifests: list[tuple[str, str]]) -> bool:
        """Whether the session set a project up in the home directory itself: a package
        manifest it wrote lies there (`~/package.json`), and none in the folder there it edited
        most (that folder would be the project, with a manifest of its own)."""
        if TranscriptSession._declared_at(home, manifests) is None:
            return False
        return worked_in is None or not any(repo.is_within(p, worked_in) for p, _ in manifests)

    def _where_kept(self) -> tuple[list[str], list[tuple[str, str]]]:
        """(the files the session edited, the package manifests it wrote with the names they
        declare), each where it ended up: a file, or a folder holding it, that the shell moved
        after it was written (`mv src app.py "My Project/"`, a project laid out in the home
        directory and then gathered into a folder of its own) is where it went; moved to a
        folder the session made, it is in that folder (`mkdir app && mv main.py app`)."""
        if not any(f.moved for f in self.facts):  # as written, most sessions
            edited = [f.event.path for f in self.facts if isinstance(f.event, FileTouched)]
            return edited, [f.manifest for f in self.facts if f.manifest is not None]
        tracked: list[_Tracked] = []
        made: set[str] = set()
        followed = 0
        for f in self.facts:
            if isinstance(f.event, FileTouched):
                tracked.append((f.event.path, _compared(f.event.path), None))
            elif f.manifest is not None:
                path, declared = f.manifest
                tracked.append((path, _compared(path), declared))
            elif f.made is not None:
                made.add(_compared(f.made))
            elif f.moved is not None and followed < _MOVES_FOLLOWED:
                followed += 1
                moved, to = f.moved
                if _compared(to) in made and (name := repo.name_of(moved)):
                    to = repo.join(to, name) or to
                key = _compared(moved)
                tracked = [_after_move(t, moved, to, key) for t in tracked]
        edited = [path for path, _, declared in tracked if declared is None]
        return edited, [(path, declared) for path, _, declared in tracked if declared is not None]

    def _made_in(self, folder: str | None) -> str | None:
        """The folder the session made directly inside `folder` (`mkdir app`, `mkdir -p
        app/src`), went into with its shell and made every edit in (plans Claude Code writes by
        itself aside): a project it set up there ("make a project called dashboard-demo", from
        a folder that holds projects). Only where nothing shows a repository in `folder`: Claude
        Code found no branch where the session started, and it committed, cloned, set an origin
        and ran git nowhere in `folder`."""
        if folder is None or self._start_branch() is not None:
            return None
        for f in self.facts:
            if isinstance(f.event, Commit) or f.cloned or f.origin:
                return None
            if f.git_in is not None and repo.is_within(f.git_in, folder):
                return None
        edited = [
            f.event.path
            for f in self.facts
            if isinstance(f.event, FileTouched)
            and f.event.edited
            and not repo.written_by_tool(f.event.path)
        ]
        depth = len(repo.segments(folder))
        made = repo.distinct_folders(
            (
                repo.join(folder, names[depth])
                for f in self.facts
                if f.made
                and repo.is_within(f.made, folder)
                and len(names := repo.segments(f.made)) > depth
            ),
            folder,
        )
        went = [f.cwd for f in self.facts if f.cwd]
        projects = [
            m
            for m in made
            if repo.could_be_project(m)
            and edited
            and all(repo.is_within(path, m) for path in edited)
            and any(repo.is_within(cwd, m) for cwd in went)
        ]
        return projects[0] if projects else None  # edits in one made folder are in no other

    def _committed_at(self, folder: str) -> bool:
        """Whether a commit of the session ran in `folder` itself."""
        key = repo.folder_key(folder, repo.is_windows(folder))
        return any(
            isinstance(f.event, Commit)
            and f.git_in is not None
            and repo.folder_key(f.git_in, repo.is_windows(folder)) == key
            for f in self.facts
        )

    def _origin_set_at(self, folder: str) -> str | None:
        """The name of the origin the session last set for a repository in `folder` itself
        (`git remote add origin …` run there), or None."""
        key = repo.folder_key(folder, repo.is_windows(folder))
        names = [
            f.origin
            for f in self.facts
            if f.origin is not None
            and f.git_in is not None
            and repo.folder_key(f.git_in, repo.is_windows(folder)) == key
        ]
        return names[-1] if names else None

    def _looked_into(self, start: str) -> str | None:
        """The folder in `start` the session read, searched and named in commands most
        (`folder_worked_in`); where its git ran in repositories inside that folder (it holds
        them: `~/code`), the one of them it looked into most (None where two tie). Not where it
        edited a file in `start` itself (`/root/install.sh`): its work was there."""
        depth = len(repo.segments(start)) + 1
        for f in self.facts:
            if isinstance(f.event, FileTouched) and f.event.edited:
                names = repo.segments(f.event.path)
                if len(names) == depth and repo.is_within(f.event.path, start):
                    return None
        looked = [path for f in self.facts if f.looked for path in f.looked.paths()]
        folder = repo.folder_worked_in(start, looked)
        if folder is None:
            return None
        ran = repo.distinct_folders((f.git_in for f in self.facts if f.git_in), start)
        inside = [g for g in ran if repo.is_within(g, folder) and not repo.is_within(folder, g)]
        repositories = [g for g in inside if not any(_below(g, o) for o in inside)]
        if not repositories:
            return folder
        ranked = sorted(
            ((sum(repo.is_within(p, g) for p in looked), g) for g in repositories), reverse=True
        )
        if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
            return None
        return ranked[0][1]

    def _shell_moved_to(self, start: str) -> str | None:
        """The folder the session's shell went into from `start` and worked in (Claude Code writes
        each record's `cwd` after a `cd`): the one outermost such folder that could be a project's
        (`~/app`, where `~/app/src` is visited too)."""
        moved = repo.distinct_folders((f.cwd for f in self.facts if f.cwd), start)
        kept = [path for path in moved if repo.could_be_project(path)]
        outermost = [p for p in kept if not any(o != p and repo.is_within(p, o) for o in kept)]
        return outermost[0] if len(outermost) == 1 else None

    def _folder_named(self, start: str) -> str | None:
        """The one folder the person's own requests name by its path (`do you have access to
        C:\\Projects\\app?`), where the session worked nowhere: what it was about."""
        named = (
            folder
            for f in self.facts
            if isinstance(f.event, Request) and not f.event.command
            for folder in repo.folders_named(f.event.text, start)
        )
        folders = repo.distinct_folders(named, start)
        return folders[0] if len(folders) == 1 else None

    def _git_ran_in(self, start: str) -> str | None:
        """The one folder other than `start` the session's git commands ran in (`cd <folder> &&
        git status`, `git -C <folder> log`): from a home directory that edited nothing with the
        editor's tools, the repository it went into and worked on with the shell."""
        folders = repo.distinct_folders((f.git_in for f in self.facts if f.git_in), start)
        return folders[0] if len(folders) == 1 else None

    def _committed_in(self, start: str) -> str | None:
        """The folder the session's commits ran in (most of them), where that is not the folder
        it started in, and the start folder shows no repository: Claude Code found no branch
        there, and no git command ran there. The session went into the repository it worked in,
        from a folder that holds repositories or from beside it; or it started inside the folder
        it committed in (a repository with no commit yet, where Claude Code finds no branch),
        whatever git ran where it started. Started in a repository: see `_moved_to_commit`."""
        if self._start_branch() is not None:
            return self._moved_to_commit(start)
        windows = repo.is_windows(start)

        def key(path: str | None) -> str | None:
            return repo.folder_key(path, windows)

        committed = [f.git_in for f in self.facts if isinstance(f.event, Commit)]
        if not committed:
            return None
        counts = Counter(key(f) for f in committed)
        inside = {key(f) for f in committed if f is not None and repo.is_within(f, start)}
        if len(inside) > 1:
            return None  # a folder of repositories, several worked in: the session's is that
        # Committed in several folders elsewhere: the one committed in most, the first of those,
        # is where the session worked (a commit in another repository later does not take it)
        folder, begun = max(committed, key=lambda f: counts[key(f)]), key(repo.normalise(start))
        if folder is None or key(folder) == begun:
            return None
        if repo.is_within(start, folder):
            return folder  # committed from a folder above the start: the start is inside it
        return None if any(key(f.git_in) == begun for f in self.facts) else folder

    def _moved_to_commit(self, start: str) -> str | None:
        """Where a session started in a repository: a commit from a folder in it (or above it)
        is its own, but where every commit ran in one folder outside it, and every file edited
        lies in that folder (one that could be a project's), the session worked there (started
        in one checkout, it kept the notes of another)."""
        folders = {f.git_in for f in self.facts if isinstance(f.event, Commit)}
        edited = [f.event.path for f in self.facts if isinstance(f.event, FileTouched)]
        if len(folders) != 1 or (folder := folders.pop()) is None or not edited:
            return None
        if repo.is_within(folder, start) or repo.is_within(start, folder):
            return None
        if not repo.could_be_project(folder):
            return None  # a worktree made in scratch space (`/tmp/…/scratchpad`) to verify
        return folder if all(repo.is_within(path, folder) for path in edited) else None

    def _start_branch(self) -> str | None:
        """The branch Claude Code found where the session started; None outside a repository
        (`HEAD`, or no branch written)."""
        branch = next((f.git_branch for f in self.facts if f.git_branch is not None), None)
        return None if branch in (None, "", "HEAD") else branch

    def _cloned_into(self, start: str) -> str | None:
        """The repository the session cloned, where it started in no repository, cloned one
        only, committed nothing, and edited nothing in the start folder outside it (a tool's
        hidden folder aside): the session went to work on what it cloned."""
        if self._start_branch() is not None or any(isinstance(f.event, Commit) for f in self.facts):
            return None  # a commit places the session (see `_committed_in`)
        made = {f.cloned for f in self.facts if f.cloned}
        if len(made) != 1:
            return None
        clone = made.pop()
        depth = len(repo.segments(start))
        for f in self.facts:
            if isinstance(f.event, FileTouched) and repo.is_within(f.event.path, start):
                below = repo.segments(f.event.path)[depth : depth + 1]
                hidden = bool(below) and below[0].startswith(".")  # a tool's own folder
                if not repo.is_within(f.event.path, clone) and not hidden:
                    return None
        return clone

    def _root_above(self, start: str) -> str | None:
        """The repository's root above the folder a session started in, where Claude Code found
        a branch there (a subfolder of the repository, `<repo>/backend`): the innermost folder
        above it whose `.git` the session showed, else the outermost whose `.gitignore` it
        showed, else the outermost it committed in (`cd <repo> && git commit`); None where the
        start folder's own `.git` showed, or nothing above it did."""
        if self._start_branch() is None or (begun := repo.normalise(start)) is None:
            return None
        marks = {f.root_mark for f in self.facts if f.root_mark is not None}
        if (begun, True) in marks:
            return None
        if (root := _root_of(begun, marks)) is not None:
            return root
        committed = {
            (f.git_in, False)
            for f in self.facts
            if f.git_in
            and f.git_in != begun
            and isinstance(f.event, Commit)
            and not repo.is_account_folder(f.git_in)
        }
        return _root_of(begun, committed)

    def _branch_worktree_main(self, cwd: str) -> str | None:
        """The repository of a worktree folder named after a branch, where the session started
        in a repository (Claude Code found a branch)."""
        if self._start_branch() is None:
            return None
        branches = {f.git_branch for f in self.facts if f.git_branch and f.git_branch != "HEAD"}
        return repo.branch_worktree_main(cwd, sorted(branches))

    def _remote(self) -> str | None:
        """The one remote the session's git commands showed (`git remote -v`, `git push`)."""
        remotes = {f.remote for f in self.facts if f.remote}
        return remotes.pop() if len(remotes) == 1 else None

    def _project_name(self, path: str | None) -> str | None:
        """The folder's name; for a home directory kept as a repository (dotfiles, or a checkout
        made there) or a hidden folder kept as one (`Documents/.claude`), the name its one remote
        shows, else the one the manifest the session wrote there declares: the folder's is the
        account's or a tool's."""
        name = repo.name_of(path)
        if path and (repo.is_account_folder(path) or (name or "").startswith(".")):
            declared = self._declared_at(path, self._where_kept()[1])
            return self._origin_set_at(path) or self._remote() or declared or name
        return name

    def closed(
        self,
        segment: int = 1,
        project_path: str | None = None,
        earlier: Sequence[Fact] = (),
        named_before: dict[int, str] | None = None,
    ) -> ClosedSession | None:
        """As a closed session (a later segment: with the `earlier` facts of the segments before,
        read again, whose events its work items are cut with, and the names those segments
        proposed tasks under, by line); None without a single timestamp."""
        times = [f.at for f in self.facts if f.at is not None]
        if not times:
            return None
        path = project_path or self.project_path()
        facts = [*earlier, *self.facts]
        new = {id(f) for f in self.facts}
        # A prompt read from the queue's records that the next request hands over (an attachment,
        # a user turn) is that request's.
        others = sorted(
            (f.line, f.event.text)
            for f in facts
            if isinstance(f.event, Request) and not f.from_queue and f.line is not None
        )

        other_lines = [line for line, _ in others]

        def handed_over(f: Fact) -> bool:
            if not (f.from_queue and isinstance(f.event, Request) and f.line is not None):
                return False
            # the next request on or after its line: the attachment that carried the prompt
            # rests on the same (enqueue) line
            after = bisect.bisect_left(other_lines, f.line)
            return after < len(others) and others[after][1] == f.event.text

        events = sorted(
            (
                (f.event, id(f) in new)
                for f in facts
                if f.event is not None and f.line is not None and not handed_over(f)
            ),
            key=lambda pair: pair[0].line,
        )
        seen_files: set[str] = set()
        kept: list[Event] = []
        before: list[Event] = []
        for e, this_segment in events:
            if isinstance(e, FileTouched):
                e = replace(e, again=e.path in seen_files)
                seen_files.add(e.path)
            (kept if this_segment else before).append(e)
        first = min((f.line for f in self.facts if f.line is not None), default=1)
        return ClosedSession(
            "claude_code",
            self.session_id,
            str(self.file),
            path,
            self._project_name(path),
            min(times),
            max(times),
            first,
            kept,
            segment,
            before,
            named_before or {},
        )


def add_facts(
    sessions: dict[str, TranscriptSession], facts: Iterable[tuple[int, Fact]], path: Path
) -> None:
    """File each fact under its session (a session is named after the file it first appears
    in: the main transcript, read first)."""
    for _, fact in facts:
        session = sessions.get(fact.session_id)
        if session is None:
            session = sessions[fact.session_id] = TranscriptSession(fact.session_id, path)
        session.facts.append(fact)


def transcript_sessions(files: Sequence[Path]) -> list[ClosedSession]:
    """The sessions of one transcript group (the main transcript first, then its subagents'),
    each closed whole, as the importer would write it on a first import."""
    reader = TranscriptReader(lambda err: None)
    sessions: dict[str, TranscriptSession] = {}
    for path in files:
        lines = positioned_lines(path)
        add_facts(sessions, reader.facts(lines, subagent=is_subagent(path)), path)
    closed = (s.closed() for _, s in sorted(sessions.items()))
    return [c for c in closed if c is not None]
