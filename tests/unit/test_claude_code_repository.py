"""Which repository a Claude Code session worked in when it went somewhere else than the folder
it was started in: Claude Code writes each record's `cwd` (the shell's, after a `cd`), and git
runs where the command took it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import REAL
from tests.support.watchdog import ends_within
from yzos_jobs.importers import repository as repo
from yzos_jobs.importers.manifest_name import manifest_name
from yzos_jobs.importers.shell_commands import (
    clone_folder,
    cloned_into,
    git_folders,
    made_folders,
    moved_paths,
)
from yzos_jobs.importers.transcript_groups import transcript_groups
from yzos_jobs.importers.transcript_session import transcript_sessions

OMARCHY = "claude-code/-home-vwestberg-Claude/2b8d60c5-358e-4b3a-b1fd-28e0a2221fd2.jsonl"
DEX_EVENTS = (
    "claude-code/-Users-shijie-Documents-Personal/da254fb0-10d6-4d61-a9e1-43b8455d4816.jsonl"
)
OPEN_WISPR = (
    "claude-code/-Users-mikemorgenstern-TIDR-Dropbox-TIDR-Team-Folder-RG-Collab-Admin/"
    "7d48b15d-e2d0-4b94-a40b-621ba5e8485f.jsonl"
)
LISTED_WORKTREE = (
    "claude-code/-Users-liuhanwen-Desktop-project-fix-user-access-device/"
    "8732a6fa-3fd8-4f6b-8af2-03a027f18f97.jsonl"
)
SUBFOLDER = (
    "claude-code/-Users-xuwentao-Projects-github-patent-platform-backend/"
    "e827650c-0d38-4ecf-8575-2f75aaf959bc.jsonl"
)
WORKTREES_FOLDER = (
    "claude-code/-home-sanand-code-datastories-worktree-bolly2-bollywood-top-grossing/"
    "b90b1f0d-a621-4cd9-ab50-9f3bb6ff4c35.jsonl"
)
DOTFILES = "claude-code/-home-deder/788a1be6-d102-4e92-8790-7289d0e1b137.jsonl"
HOME_PUSHED = "claude-code/-home-matt24/0b223d21-a2f0-4f64-801b-4707e43f4c3c.jsonl"
HIDDEN_REPOSITORY = "claude-code/-home-echo/5b1e9ac4-21c3-4295-b8cf-f528b569ffa7.jsonl"
SIBLING_WORKTREES = (
    "claude-code/-home-USER-projects-spotter-worktrees-spotter-gqc/"
    "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
SYSTEM_FOLDER = "claude-code/C--Windows-System32/3ac4dddd-02f9-4d49-977f-d130b036a3b8.jsonl"
COMMITTED_ABOVE = (
    "claude-code/-Users-a111111-demo-LazyBlog-docs-posts/5df30a8e-5fb8-47cd-8227-b355aa3b4139.jsonl"
)
HOME_CHECKOUT = "claude-code/-root/3616a3c2-c5c3-4f28-87f6-2d12f8167aaa.jsonl"
SKILL_FOLDER = (
    "claude-code/-home-nick-work-libnn-0421--claude-skills-optimize/"
    "a842c9d1-a664-4a2b-81fc-f08d63b5db50.jsonl"
)
NOTES_ELSEWHERE = (
    "claude-code/-home-moxa-sdc1-home-moxa-mds4xgl3-buildroot-dl/"
    "bb66d2eb-0269-43fb-b568-8d66312a90ed.jsonl"
)
BARE_WORKTREE = (
    "claude-code/-Users-jbiggs-code-buy-hh-buy-honehealth-com-main/"
    "b4b90999-7da9-4cfe-ad8b-6f540f389d0e.jsonl"
)

TERMUX = "claude-code/-data-data-com-termux-files-home/fc89f66c-8204-49ff-8e2c-d4f0fac2dcd9.jsonl"
COWORK = "claude-code/-sessions-adoring-cool-einstein/588184d4-177e-44ac-8c58-42a78448aa99.jsonl"
CLAUDE_SETUP = "claude-code/C--Users-flori/e3cbf911-0c74-48d8-95c6-5e1285f0d41f.jsonl"
PLAN_ONLY = "claude-code/-mnt-c-Users-supanut-akaram/199d5e8c-7fa9-498e-8db6-005e02f13909.jsonl"
SETTINGS_FROM_SYSTEM32 = (
    "claude-code/C--Windows-System32/1a2bb05f-b7c1-4fff-a89c-908bcbd526ae.jsonl"
)
MADE_PROJECT = "claude-code/-root-projeto/14e9eeb1-a80f-44e1-9848-cd62a4450a8d.jsonl"
SERVED_SITE = "claude-code/-root/582d07f0-bdc7-4b0c-8f7f-7e7a1aeeea6a.jsonl"
ORIGIN_SET = "claude-code/C--Users-jtowe/132713a8-eca5-47a8-829a-f4b1b5637c78.jsonl"
GATHERED_INTO_FOLDER = "claude-code/C--Users-User/57906022-8889-4fab-a1bf-bc8b00051107.jsonl"
LAID_OUT_IN_HOME = "claude-code/C--Users-lu801/e11c8f12-b35d-46d2-a78b-7a2f4b9f686d.jsonl"


def _project(path: Path) -> str | None:
    [group] = transcript_groups([path.resolve()])
    [session] = transcript_sessions(group)
    return session.project_path


def test_a_session_that_made_a_repository_beside_its_folder_and_committed_there_works_in_it() -> (
    None
):
    # cwd ~/Claude (no repository): `cd ~/omarchy-backup && git init`, then a commit there
    assert _project(REAL / OMARCHY) == "/home/vwestberg/omarchy-backup"


def test_a_session_started_in_a_folder_of_repositories_works_in_the_one_it_committed_in() -> None:
    # cwd ~/Documents/Personal; `cd blockchain-dex-events`, every commit made there
    assert _project(REAL / DEX_EVENTS) == "/Users/shijie/Documents/Personal/blockchain-dex-events"


def test_a_session_started_outside_a_repository_works_in_the_one_it_cloned() -> None:
    # cwd a shared-drive folder (no repository): `cd /tmp && git clone …/open-wispr.git`, then
    # its sources read to look into the app's crashes
    assert _project(REAL / OPEN_WISPR) == "/tmp/open-wispr"


def test_a_worktree_folder_named_after_a_branch_is_its_repository() -> None:
    # a bare clone's layout: the worktree `<repo>/main`, gone on to a branch of its own
    assert _project(REAL / BARE_WORKTREE) == "/Users/jbiggs/code/buy-hh/buy-honehealth-com"


def test_a_session_started_in_termuxs_home_works_in_the_folder_it_went_into() -> None:
    # Android's Termux keeps its home at a fixed path with no account's name in it; asked to
    # move into ~/myapp and make a project folder there, it made `hello-world-app` and wrote
    # every file in it
    assert _project(REAL / TERMUX) == "/data/data/com.termux/files/home/myapp/hello-world-app"
    assert repo.home_of("/data/data/com.termux/files/home/myapp") == (
        "/data/data/com.termux/files/home"
    )


def test_a_project_the_session_made_in_a_folder_of_projects_is_the_project() -> None:
    # cwd /root/projeto (no repository): "make a complete project called dashboard-demo",
    # `mkdir -p dashboard-demo/{backend,frontend}`, every file written below it
    assert _project(REAL / MADE_PROJECT) == "/root/projeto/dashboard-demo"


def test_a_home_session_that_edited_a_site_in_place_worked_on_that_site() -> None:
    # root's home on a server: nginx's configuration, a sudoers rule, and the deploy script of
    # the site in /var/www/tu-app
    assert _project(REAL / SERVED_SITE) == "/var/www/tu-app"
    home = "/home/me"
    assert repo.project_edited_outside(home, ["/srv/api/main.py", "/etc/hosts"]) == "/srv/api"
    assert repo.project_edited_outside(home, ["/home/other/app/x.py"]) == "/home/other/app"
    wsl_windows_home = "/mnt/c/Users/me/proj"
    assert repo.project_edited_outside(home, [f"{wsl_windows_home}/a.py"]) == wsl_windows_home
    # a drive, a mount or the system's own folders are no project
    for path in ("/Volumes/SSD/code/a.py", "/boot/firmware/config.txt", "/mnt/d/code/a.py"):
        assert repo.project_edited_outside(home, [path]) is None, path
    assert repo.project_edited_outside(home, ["/opt/homebrew/etc/x.conf"]) is None
    # two projects, or only configuration and scratch space: no one place
    assert repo.project_edited_outside(home, ["/srv/api/a", "/var/www/site/b"]) is None
    assert repo.project_edited_outside(home, ["/etc/nginx/nginx.conf", "/tmp/x/y.py"]) is None
    assert not repo.could_be_project("/var/www")
    assert not repo.could_be_project("/var/log/nginx")


def _written(n: int, cwd: str, path: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"w{n}", "name": "Write", "input": {"file_path": path}}
    result = {"type": "tool_result", "tool_use_id": f"w{n}", "content": "File created"}
    return [_record(n, cwd, "assistant", [call]), _record(n + 1, cwd, "user", [result])]


WORK, APP = "/home/me/work", "/home/me/work/app"


def _session_of(
    tmp_path: Path,
    calls: list[tuple[str, str, str]],
    paths: tuple[str, ...],
    *,
    branch: str = "HEAD",
    written_in: str = APP,
) -> tuple[str | None, str | None]:
    """(project path, project name) of a session that ran each (cwd, command, output) in
    Bash (an output starting `fatal:` a failed one), then wrote each of `paths`."""
    records = [_record(0, calls[0][0], "user", "make an app", branch)]
    for i, (cwd, command, output) in enumerate(calls):
        call, result = _bash(1 + 2 * i, cwd, command, output)
        if output.startswith("fatal:"):
            result["message"]["content"][0]["is_error"] = True
        records += [call, result]
    records += (r for i, p in enumerate(paths) for r in _written(50 + 2 * i, written_in, p))
    for r in records:
        r["gitBranch"] = branch
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    [group] = transcript_groups([path.resolve()])
    [session] = transcript_sessions(group)
    return session.project_path, session.project


def _made_then_written(
    tmp_path: Path, *paths: str, command: str = "mkdir -p app/src && cd app", **how: str
) -> str | None:
    return _session_of(tmp_path, [(WORK, command, "")], paths, **how)[0]


def test_a_made_folder_is_the_project_only_where_every_edit_lies_in_it(tmp_path: Path) -> None:
    assert _made_then_written(tmp_path, f"{APP}/src/a.py", f"{APP}/README.md") == APP
    # a plan Claude Code wrote in its own folder is no edit of the person's
    assert _made_then_written(tmp_path, f"{APP}/a.py", "/home/me/.claude/plans/p.md") == APP
    # an edit beside it: the session worked on the folder it started in
    assert _made_then_written(tmp_path, f"{APP}/a.py", f"{WORK}/notes.md") == WORK


def test_a_made_folder_is_the_project_only_where_the_shell_went_into_it(tmp_path: Path) -> None:
    # made, never gone into: the session stays where it started
    assert _made_then_written(tmp_path, f"{APP}/a.py", command="mkdir app", written_in=WORK) == WORK
    # two folders made, and the edits in one: that one
    two = "mkdir -p app lib && cd app"
    assert _made_then_written(tmp_path, f"{APP}/a.py", command=two) == APP
    # a hidden folder made (a tool's, `.venv`) is no project
    hidden = "mkdir .app && cd .app"
    assert _made_then_written(tmp_path, f"{WORK}/.app/a.py", command=hidden) == WORK


def test_a_made_folder_is_no_project_where_a_repository_shows(tmp_path: Path) -> None:
    # started in a repository: a folder made in it is part of it
    assert _made_then_written(tmp_path, f"{APP}/a.py", branch="main") == WORK
    # git ran where it started (`git init`'s repository, a status there)
    calls = [(WORK, "git status", "On branch main"), (WORK, "mkdir app && cd app", "")]
    assert _session_of(tmp_path, calls, (f"{APP}/a.py",))[0] == WORK


@pytest.mark.parametrize(
    ("command", "made"),
    [
        ("mkdir app", ["/w/app"]),
        ("mkdir -p dashboard-demo/{backend,frontend}", ["/w/dashboard-demo"]),
        ("cd /srv && mkdir -m 755 -p site/static", ["/srv/site/static"]),
        ('mkdir "my app" x', ["/w/my app", "/w/x"]),
        ("mkdir -p $HOME/x && cd x", []),  # what the shell substitutes is not spelled out
        ("ls && mkdir ~/notes", ["/home/me/notes"]),
        ("echo mkdir x", []),
        ("sudo mkdir -p dash && cd dash", ["/w/dash"]),
        ("(mkdir x)", ["/w/x"]),
        ("mkdir x>/dev/null", ["/w/x"]),
        ("mkdir -pm 755 x", ["/w/x"]),
        ("mkdir x 2>/dev/null", ["/w/x"]),
        ("mkdir -p x & cd x", ["/w/x"]),
        ("mkdir x # and y", ["/w/x"]),
        ('cd "$D" && mkdir x', []),  # where `cd` went cannot be told
        ("cat > setup.sh <<'EOF'\nmkdir -p dist\nEOF", []),  # a file's text, not run here
        ("ssh host 'mkdir -p /srv/app'", []),  # made on another machine
    ],
)
def test_the_folders_a_mkdir_makes(command: str, made: list[str]) -> None:
    cwd = "/home/me" if "~" in command else "/w"
    assert made_folders(command, cwd) == made


def test_a_home_session_that_edited_only_a_tools_hidden_folder_worked_on_that_tool() -> None:
    # started in the home folder, it set up Claude Code itself: agents, rules, settings, all in
    # ~/.claude
    assert _project(REAL / CLAUDE_SETUP) == "C:\\Users\\flori\\.claude"
    # a plan Claude Code wrote in ~/.claude/plans by itself is no work on the tool
    assert _project(REAL / PLAN_ONLY) is None
    home = "/home/me"
    assert repo.hidden_folder_edited(home, ["/home/me/.openclaw/openclaw.json"]) == (
        "/home/me/.openclaw"
    )
    assert repo.hidden_folder_edited(home, ["/home/me/.a/x", "/home/me/.b/y"]) is None
    assert repo.hidden_folder_edited(home, ["/home/me/.a/x", "/home/me/app/y"]) is None


def test_a_session_started_in_a_system_folder_that_edited_only_a_tools_hidden_folder() -> None:
    # an administrator's terminal opens in System32: the fix /doctor offered went into
    # ~/.claude/settings.json of the account's home
    assert _project(REAL / SETTINGS_FROM_SYSTEM32) == "C:\\Users\\Sascha Zielke\\.claude"
    system32 = "C:\\Windows\\System32"
    assert repo.hidden_folder_edited(system32, ["C:\\Users\\me\\.claude\\settings.json"]) == (
        "C:\\Users\\me\\.claude"
    )
    assert repo.hidden_folder_edited("/", ["/home/me/.config/kitty/kitty.conf"]) == (
        "/home/me/.config"
    )
    # edits in two homes, or beside the home, name no one home's tool
    two_homes = ["C:\\Users\\me\\.claude\\a", "C:\\Users\\you\\.claude\\b"]
    assert repo.hidden_folder_edited(system32, two_homes) is None
    assert repo.hidden_folder_edited("/", ["/home/me/.config/x", "/etc/hosts"]) is None
    # Windows names folders without regard to case; a path that climbs out of the home hides
    # nothing
    settings = ["C:\\Users\\me\\.claude\\a.json", "c:\\users\\me\\.Claude\\b.json"]
    assert repo.hidden_folder_edited(system32, settings) == "C:\\Users\\me\\.claude"
    assert repo.hidden_folder_edited("/", ["/home/me/../you/.ssh/config"]) is None
    # a folder that is no system folder is the home itself, as before
    assert repo.hidden_folder_edited("/srv/app", ["/home/me/.claude/settings.json"]) is None


def test_a_claude_desktop_session_works_in_the_folder_it_wrote_in_below_its_mounts() -> None:
    # Cowork's session home `/sessions/<name>`: everything written below `mnt/outputs/og-system`
    assert _project(REAL / COWORK) == "/sessions/adoring-cool-einstein/mnt/outputs/og-system"
    assert repo.is_account_folder("/sessions/adoring-cool-einstein/mnt/outputs")
    assert not repo.is_account_folder("/sessions/adoring-cool-einstein/mnt/og-system")
    assert (
        repo.home_of("/sessions/adoring-cool-einstein/mnt/x") == "/sessions/adoring-cool-einstein"
    )
    # a repository someone keeps in a folder named /sessions is no session's home
    assert not repo.is_account_folder("/sessions/WorkFlow")
    assert repo.home_of("/sessions/WorkFlow/src") is None


def test_a_worktree_in_a_folder_of_worktrees_beside_its_repository_is_the_repository() -> None:
    # `spotter-worktrees/spotter-gqc` on branch `spotter-gqc`: the transcript never shows the
    # repository, which the folder of worktrees is named after
    assert _project(REAL / SIBLING_WORKTREES) == "/home/USER/projects/spotter"


def test_a_home_directory_kept_as_a_repository_is_named_by_its_remote() -> None:
    # dotfiles kept in git in the home directory: the folder's name is the account's, and
    # `git remote -v` and `git push` show the repository's, `config_files`
    [group] = transcript_groups([(REAL / DOTFILES).resolve()])
    [session] = transcript_sessions(group)
    assert (session.project_path, session.project) == ("/home/deder", "config_files")


def _placed(source: str) -> tuple[str | None, str | None]:
    [group] = transcript_groups([(REAL / source).resolve()])
    [session] = transcript_sessions(group)
    return session.project_path, session.project


def test_a_home_directory_committed_in_is_the_repository_wherever_the_edits_are() -> None:
    # `/root` is a Next.js app's checkout: edits in `/root/src/app`, `git add -A && git commit`
    # run in `/root` itself, and `git remote -v` shows `CleanExpo/Zenith-Fresh`
    assert _placed(HOME_CHECKOUT) == ("/root", "Zenith-Fresh")


def test_a_session_started_in_a_tools_hidden_folder_belongs_to_the_project_holding_it() -> None:
    # started in `libnn_0421/.claude/skills/optimize` (a branch there, no root shown): the skill
    # is kept in the project it is used in
    assert _placed(SKILL_FOLDER) == ("/home/nick/work/libnn_0421", "libnn_0421")
    assert repo.above_hidden("/home/me/.config/nvim") is None  # a repository of its own


def test_a_session_whose_every_edit_and_commit_is_in_another_repository_worked_there() -> None:
    # started in a buildroot checkout (a branch there) only read for lookups; every document
    # edited and both commits (`cd ~/WORK/SNMP_50ms && git commit -q -F - <<'EOF' …`) are in
    # another repository
    assert _placed(NOTES_ELSEWHERE) == ("/home/moxa/WORK/SNMP_50ms", "SNMP_50ms")


def test_a_home_directory_that_shows_its_remote_is_a_repository_though_no_commit_shows() -> None:
    # `git init` in the home directory, `git remote add origin …/testing.git`, then `git remote
    # -v`; the file ends before the commit's result
    assert _placed(HOME_PUSHED) == ("/home/matt24", "testing")


def test_a_home_directory_whose_origin_the_session_set_is_the_repository() -> None:
    # a branch in the home folder; agents written in ~/.claude, a customer's files in ~/inputs,
    # and `git remote add origin git@github.com:17871787/Long_Clawson.git` run in the home folder
    assert _placed(ORIGIN_SET) == ("C:\\Users\\jtowe", "Long_Clawson")


def test_only_an_origin_git_set_in_the_home_folder_itself_makes_it_the_repository(
    tmp_path: Path,
) -> None:
    home, proj = "/home/me", "/home/me/proj"
    edits = (f"{proj}/a.py",)

    def placed(*calls: tuple[str, str]) -> tuple[str | None, str | None]:
        return _session_of(tmp_path, [(home, c, out) for c, out in calls], edits, written_in=proj)

    url = "git@github.com:me/dotfiles.git"
    assert placed((f"git init && git remote add origin {url}", "")) == (home, "dotfiles")
    # set again: the last one names it
    again = (f"git remote set-url origin {url}", "")
    assert placed(("git remote add origin https://github.com/me/old.git", ""), again) == (
        home,
        "dotfiles",
    )
    assert placed((f"(git init && git remote add origin {url})", "")) == (home, "dotfiles")
    # set in a folder of the home, failed, on another machine, or only written or shown
    assert placed((f"cd proj && git remote add origin {url}", ""))[0] == proj
    assert placed((f"git remote add origin {url}", "fatal: not a git repository"))[0] == proj
    assert placed((f"ssh box 'cd /srv/x && git remote set-url origin {url}'", ""))[0] == proj
    heredoc = f"cat > proj/README.md <<'EOF'\ngit remote add origin {url}\nEOF"
    assert placed((heredoc, ""))[0] == proj
    assert placed((f"echo 'next: git remote add origin {url}'", ""))[0] == proj


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("git remote add origin git@github.com:me/shop.git 2>/dev/null", "shop"),
        ("git remote set-url origin https://github.com/me/shop", "shop"),
        ('git remote add -f origin "https://host/x/tools.git"', "tools"),
        ("git remote add upstream https://github.com/them/shop.git", None),  # not its own
        ("git remote -v", None),
    ],
)
def test_the_origin_a_command_sets(command: str, name: str | None) -> None:
    assert repo.origin_set(command) == name


def test_a_hidden_folder_kept_as_a_repository_is_named_by_its_remote() -> None:
    # committed in /mnt/c/Users/password/Documents/.claude from the home directory: the folder
    # is named after the tool, `git remote -v` shows the repository's name
    folder = "/mnt/c/Users/password/Documents/.claude"
    assert _placed(HIDDEN_REPOSITORY) == (folder, "SystemGoat-Factory")


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("origin\tgit@github.com:me/config_files.git (fetch)\n", ["config_files"]),
        ("To https://github.com/me/app.git\n   f03fa84..d16b186  main -> main", ["app"]),
        ("To ssh://git@host:2222/srv/tools.git", ["tools"]),
        ("To do: fix the login", []),
        ("upstream\tgit@github.com:them/app.git (fetch)", []),  # not the session's own
    ],
)
def test_the_remote_a_command_shows(text: str, names: list[str]) -> None:
    assert repo.remote_names(text) == names


def test_a_worktree_git_worktree_list_shows_is_its_main_repository() -> None:
    # cwd a linked worktree beside the repository; `git worktree list` prints the main one first
    assert _project(REAL / LISTED_WORKTREE) == "/Users/liuhanwen/Desktop/project/webtech-monorepo"


def test_a_session_started_in_a_subfolder_of_its_repository_is_the_repository() -> None:
    # cwd `patent-platform/backend`; the session read and edited the root's `.gitignore` and
    # CLAUDE.md (the backend's own `.gitignore` too)
    assert _project(REAL / SUBFOLDER) == "/Users/xuwentao/Projects/github/patent-platform"


def test_a_session_started_in_a_subfolder_that_committed_at_the_root_is_the_repository() -> None:
    # cwd `LazyBlog/docs/posts` on branch `main`; no `.git` or `.gitignore` shows, and the post
    # is committed with `cd /Users/a111111/demo/LazyBlog && git add … && git commit`
    assert _project(REAL / COMMITTED_ABOVE) == "/Users/a111111/demo/LazyBlog"


def test_a_worktree_in_a_folder_of_worktrees_named_after_its_branch_is_the_repository() -> None:
    # cwd `datastories/worktree/bolly2/bollywood-top-grossing` on branch `bolly2`
    assert _project(REAL / WORKTREES_FOLDER) == "/home/sanand/code/datastories"


@pytest.mark.parametrize(
    ("text", "cwd", "marks"),
    [
        ("cat /r/app/.gitignore", "/r/app/web", [("/r/app", False)]),
        ("ls /r/app/.git/", "/r/app/web", [("/r/app", True)]),
        ("/r/app/.git/modules/web/HEAD", "/r/app/web", []),  # a submodule's git directory
        ("/r/app/.github/workflows/ci.yml", "/r/app/web", []),
        ("/home/ann/.gitignore", "/home/ann/app", []),  # the home directory is no repository
        ("C:\\dev\\app\\.gitignore", "C:\\dev\\app\\web", [("C:\\dev\\app", False)]),
        # Claude Code's memory of the repository, kept under its root's path
        (
            "/home/ann/.claude/projects/-r-my-app/memory/MEMORY.md",
            "/r/my_app/web",
            [("/r/my_app", True)],
        ),
        (
            "C:\\Users\\ann\\.claude\\projects\\S--Repos-Db\\memory\\MEMORY.md",
            "S:\\Repos\\Db\\MES",
            [("S:\\Repos\\Db", True)],
        ),
        ("~/.claude/projects/-r-other/memory/x.md", "/r/my_app/web", []),  # another's memory
        (  # the drive's letter written in the other case
            "C:\\Users\\ann\\.claude\\projects\\s--Repos-Db\\memory\\MEMORY.md",
            "S:\\Repos\\Db\\MES",
            [("S:\\Repos\\Db", True)],
        ),
    ],
)
def test_where_a_repository_root_shows(text: str, cwd: str, marks: list[tuple[str, bool]]) -> None:
    assert repo.root_marks(text, cwd) == marks


def test_a_subfolder_moves_only_a_session_started_in_a_repository(tmp_path: Path) -> None:
    step = ("/home/me/shop/web", "cat /home/me/shop/.gitignore", "node_modules")
    assert _project(_transcript(tmp_path, step, branch="main")) == "/home/me/shop"
    assert _project(_transcript(tmp_path, step)) == "/home/me/shop/web"
    # the start folder's own `.git` shows: it is the root
    own = ("/home/me/shop/web", "ls /home/me/shop/web/.git/", "HEAD")
    assert _project(_transcript(tmp_path, step, own, branch="main")) == "/home/me/shop/web"


def test_a_subfolder_whose_repository_claude_code_keeps_memory_for_is_the_repository(
    tmp_path: Path,
) -> None:
    # cwd `MES` of the repository `Db`: Claude Code wrote the repository's memory, kept under
    # the root's path, not the subfolder's
    memory = "/home/me/.claude/projects/-home-me-Db/memory/MEMORY.md"
    step = ("/home/me/Db/MES", f"cat {memory}", "# Project memory")
    assert _project(_transcript(tmp_path, step, branch="develop")) == "/home/me/Db"
    assert _project(_transcript(tmp_path, step)) == "/home/me/Db/MES"  # no repository found


@pytest.mark.parametrize(
    ("text", "cwd", "main"),
    [
        ("/p/app  1a2b3c4 [main]\n/p/app-fix  5d6e7f8 [fix]\n", "/p/app-fix/src", "/p/app"),
        ("/p/app  1a2b3c4 [main]\n/p/app-fix  5d6e7f8 [fix]\n", "/p/app", None),
        ("/p/shop/.bare  (bare)\n/p/shop/main  1a2b3c4 [main]\n", "/p/shop/main", "/p/shop"),
        ("worktree /p/app\nHEAD 1a2b\n\nworktree /p/wt\nHEAD 3c4d\n", "/p/wt", "/p/app"),
        ("/p/app  1a2b3c4 [main]\n", "/p/app", None),
    ],
)
def test_the_main_worktree_git_lists(text: str, cwd: str, main: str | None) -> None:
    assert repo.main_worktree_listed(text, cwd) == main


def _record(n: int, cwd: str, kind: str, content: Any, branch: str = "HEAD") -> dict[str, Any]:
    return {
        "uuid": f"u{n}",
        "sessionId": "s1",
        "cwd": cwd,
        "gitBranch": branch,  # as Claude Code writes it: `HEAD` outside a repository
        "type": kind,
        "message": {"role": kind, "content": content},
        "timestamp": f"2026-11-04T10:00:{n:02d}Z",
    }


def _bash(n: int, cwd: str, command: str, output: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": output}
    return [_record(n, cwd, "assistant", [call]), _record(n + 1, cwd, "user", [result])]


def _transcript(tmp_path: Path, *calls: tuple[str, str, str], branch: str = "HEAD") -> Path:
    """A request, then each (cwd, command, output) as a Bash call and its result."""
    records = [_record(0, calls[0][0], "user", "fix the build and commit it", branch)]
    for i, (cwd, command, output) in enumerate(calls):
        records += _bash(2 * i + 1, cwd, command, output)
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


COMMITTED = "[main 1a2b3c4] Fix the build\n 1 file changed"


def test_a_commit_made_in_a_subfolder_of_the_repository_it_started_in_leaves_it_there(
    tmp_path: Path,
) -> None:
    root = "/home/me/code/shop"
    path = _transcript(
        tmp_path,
        (root, "git status", "On branch main\nnothing to commit"),
        (f"{root}/frontend", "cd frontend && npm run build", "built"),
        (f"{root}/frontend", 'git commit -am "Fix the build"', COMMITTED),
    )
    assert _project(path) == root


def test_a_session_started_in_a_repository_stays_there_though_it_only_committed_from_a_folder(
    tmp_path: Path,
) -> None:
    # Claude Code found the branch `main` where the session started: a repository
    root = "/home/me/code/shop"
    calls = (
        (root, "cd frontend && npm run build", "built"),
        (f"{root}/frontend", 'git commit -am "Fix the build"', COMMITTED),
    )
    assert _project(_transcript(tmp_path, *calls, branch="main")) == root
    assert _project(_transcript(tmp_path, *calls)) == f"{root}/frontend"  # none found there
    # started in a subfolder, committed from the root: the root
    above = ((f"{root}/docs", f'cd {root} && git commit -am "Fix the build"', COMMITTED),)
    assert _project(_transcript(tmp_path, *above, branch="main")) == root


def test_a_session_that_committed_in_two_repositories_worked_in_the_one_it_committed_in_most(
    tmp_path: Path,
) -> None:
    start = "/home/me/Downloads"
    snmp = ("/home/me/work/snmp", "cd /home/me/work/snmp && git commit -am x", COMMITTED)
    dash = ("/home/me/work/dash", "cd /home/me/work/dash && git commit -am y", COMMITTED)
    notes = (start, "mkdir notes", "")
    # one commit each: the first repository it went into
    assert _project(_transcript(tmp_path, notes, snmp, dash)) == "/home/me/work/snmp"
    assert _project(_transcript(tmp_path, notes, dash, snmp, dash)) == "/home/me/work/dash"


def test_a_folder_the_shell_expands_moves_nothing(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path,
        ("/home/me/shop", 'cd "$(git rev-parse --show-toplevel)" && git commit -m x', COMMITTED),
    )
    assert _project(path) == "/home/me/shop"


def test_a_windows_repository_spelled_otherwise_is_the_same_folder(tmp_path: Path) -> None:
    cwd = "C:\\Users\\me\\proj"
    for command in (
        "git -C c:/users/me/proj commit -m x",
        "cd /c/Users/me/proj && git commit -m x",
    ):
        path = _transcript(tmp_path, (cwd, command, COMMITTED))
        assert _project(path) == cwd, command


def test_git_run_in_the_start_folder_only_for_the_users_settings_does_not_hold_the_session(
    tmp_path: Path,
) -> None:
    path = _transcript(
        tmp_path,
        ("/home/me/scratch", "git config --global user.name", "Me"),
        ("/home/me/scratch", 'git -C ../tools commit -m "Fix the build"', COMMITTED),
    )
    assert _project(path) == "/home/me/tools"


def test_commits_in_two_repositories_leave_the_session_where_it_started(tmp_path: Path) -> None:
    first = ("/home/me/work", 'cd api && git commit -m "Fix the build"', COMMITTED)
    second = ("/home/me/work", 'cd web && git commit -m "Fix the build"', COMMITTED)
    path = _transcript(tmp_path, first, second)
    assert _project(path) == "/home/me/work"
    # a commit in a repository elsewhere as well leaves it so
    elsewhere = ("/home/me/work", 'cd ../other && git commit -m "Fix the build"', COMMITTED)
    assert _project(_transcript(tmp_path, *[first, first, second, second, elsewhere])) == (
        "/home/me/work"
    )


def test_a_session_that_committed_from_a_folder_above_its_start_works_in_that_folder(
    tmp_path: Path,
) -> None:
    # a repository with no commit yet (Claude Code found no branch): git reads it from the
    # start folder too, and the first commit is made at its root
    start, hq = "/home/me/hq/rig", "/home/me/hq"
    calls = (
        (start, "git remote -v", "origin  git@github.com:me/hq.git (fetch)"),
        (start, f'cd {hq} && git add -A && git commit -m "Initial commit"', COMMITTED),
    )
    assert _project(_transcript(tmp_path, *calls)) == hq


def test_a_home_session_that_edited_nothing_works_in_the_one_folder_its_git_ran_in(
    tmp_path: Path,
) -> None:
    # started in the home directory, the work done with the shell in one repository
    home, site = "/home/me", "/home/me/code/site"
    calls = (
        (home, f"cd {site} && git status", "On branch main\nnothing to commit"),
        (home, f"cd {site} && mkdir -p docs/old && mv notes.md docs/old/", ""),
        (home, f"git -C {site} log --oneline -3", "1a2b3c4 Add notes"),
    )
    assert _project(_transcript(tmp_path, *calls)) == site
    # git run in two repositories says neither is the session's by itself: the one its commands
    # went into most is, and with as many in each, neither
    other = (home, "git -C /home/me/code/blog status", "On branch main")
    assert _project(_transcript(tmp_path, *calls, other)) == site
    again = (home, "cd /home/me/code/blog && git log -1", "1a2b3c4 Add a post")
    ls = (home, "ls /home/me/code/blog/posts", "hello.md")
    assert _project(_transcript(tmp_path, *calls, other, again, ls)) is None


def _tool(n: int, cwd: str, name: str, tool_input: dict[str, str]) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"t{n}", "name": name, "input": tool_input}
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "…"}
    return [_record(n, cwd, "assistant", [call]), _record(n + 1, cwd, "user", [result])]


def _looked(tmp_path: Path, home: str, *calls: tuple[str, dict[str, str]]) -> str | None:
    records = [_record(0, home, "user", "how does the checkout of my shop work?")]
    for i, (name, tool_input) in enumerate(calls):
        records += _tool(2 * i + 1, home, name, tool_input)
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return _project(path)


def test_a_home_session_that_only_looked_into_a_project_is_about_that_project(
    tmp_path: Path,
) -> None:
    # started in the home directory to answer questions about an app: it read and searched the
    # app's files (and a tool's own hidden folder), edited nothing, ran no git
    home, app = "C:\\Users\\me", "C:\\Users\\me\\shop"
    hidden = [
        ("Read", {"file_path": f"{home}\\.claude\\settings.json"}),
        ("Read", {"file_path": f"{home}\\.claude\\CLAUDE.md"}),
        ("Read", {"file_path": f"{home}\\.claude\\agents.md"}),
    ]
    looks = [
        ("Read", {"file_path": f"{app}\\README.md"}),
        ("Grep", {"pattern": "checkout", "path": f"{app}\\src"}),
        ("Bash", {"command": f'dir "{app}\\src\\cart"'}),
    ]
    assert _looked(tmp_path, home, *hidden, *looks) == app
    # with nothing read outside hidden folders: no project rather than the account's
    assert _looked(tmp_path, home, *hidden) is None
    # nor where it edited a file of the home directory itself: its work was there
    setup = ("Edit", {"file_path": f"{home}\\setup.ps1", "old_string": "a", "new_string": "b"})
    assert _looked(tmp_path, home, *looks, setup) is None
    # a folder holding repositories, where git ran in two of them: the one looked into most
    code = "/home/me/code"
    shop = [
        ("Read", {"file_path": f"{code}/shop/README.md"}),
        ("Glob", {"pattern": "**/*.ts", "path": f"{code}/shop"}),
        ("Bash", {"command": f"cd {code}/shop && git status"}),
    ]
    blog = [("Bash", {"command": f"git -C {code}/blog log -1"})]
    assert _looked(tmp_path, "/home/me", *shop, *blog) == f"{code}/shop"
    assert _looked(tmp_path, "/home/me", *shop[2:], *blog) is None  # as much of each


CLONED = "Cloning into 'tool'...\nremote: Enumerating objects: 12, done."


def test_a_clone_places_the_session_only_where_nothing_else_does(tmp_path: Path) -> None:
    clone = ("/home/me/scratch", "git clone https://example.org/tool.git", CLONED)
    read = ("/home/me/scratch", "cat tool/README.md", "# tool")
    assert _project(_transcript(tmp_path, clone, read)) == "/home/me/scratch/tool"
    # started in a repository: a clone beside it is a dependency looked at
    assert _project(_transcript(tmp_path, clone, read, branch="main")) == "/home/me/scratch"
    # two clones: no one of them is the work
    other = ("/home/me/scratch", "git clone https://example.org/lib.git", "Cloning into 'lib'...")
    assert _project(_transcript(tmp_path, clone, other)) == "/home/me/scratch"
    # a clone that failed made nothing
    failed = ("/home/me/scratch", "git clone https://example.org/tool.git", "fatal: not found")
    assert _project(_transcript(tmp_path, failed)) == "/home/me/scratch"


def test_edits_in_the_start_folder_keep_a_session_that_cloned_there(tmp_path: Path) -> None:
    path = _transcript(
        tmp_path, ("/home/me/scratch", "git clone https://example.org/tool.git", CLONED)
    )
    for file, project in (
        ("/home/me/scratch/tool/main.py", "/home/me/scratch/tool"),
        ("/home/me/scratch/.notes/plan.md", "/home/me/scratch/tool"),  # a tool's hidden folder
        ("/home/me/scratch/notes.md", "/home/me/scratch"),
    ):
        edit = {"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": file}}
        made = {"type": "tool_result", "tool_use_id": "w1", "content": "File created"}
        written = [
            json.dumps(_record(9, "/home/me/scratch", "assistant", [edit])),
            json.dumps(_record(10, "/home/me/scratch", "user", [made])),
        ]
        lines = [*path.read_text().splitlines()[:3], *written]
        path.write_text("\n".join(lines) + "\n")
        assert _project(path) == project, file
        # an edit the person rejected made nothing there: the session works in its clone
        rejected = {**made, "is_error": True, "content": "The user doesn't want to proceed"}
        written[1] = json.dumps(_record(10, "/home/me/scratch", "user", [rejected]))
        path.write_text("\n".join([*lines[:3], *written]) + "\n")
        assert _project(path) == "/home/me/scratch/tool", file


@pytest.mark.parametrize(
    ("command", "cwd", "output", "made"),
    [
        ("git clone u", "/home/me", "Cloning into 'u'...", ["/home/me/u"]),
        ("cd /tmp && git clone --depth=1 u x", "/home/me", "Cloning into 'x'...", ["/tmp/x"]),
        ("cd $D && git clone u x", "/a", "Cloning into 'x'...", []),  # folder not known
        ("cd $D && git clone u /srv/x", "/a", "Cloning into '/srv/x'...", ["/srv/x"]),
        ("git clone --bare u", "/a", "Cloning into bare repository 'u.git'...", ["/a/u.git"]),
        ("git clone u", "/home/me", "fatal: repository 'u' does not exist", []),
    ],
)
def test_what_a_clone_made(command: str, cwd: str | None, output: str, made: list[str]) -> None:
    assert cloned_into(clone_folder(command, cwd), output) == made


@pytest.mark.parametrize(
    ("cwd", "branches", "main"),
    [
        ("/Users/ann/code/shop/main", [], "/Users/ann/code/shop"),
        ("/Users/ann/code/shop/master", ["fix/login"], "/Users/ann/code/shop"),
        ("/Users/ann/code/shop/feat/login", ["feat/login"], "/Users/ann/code/shop"),
        ("C:\\dev\\shop\\hotfix", ["hotfix"], "C:\\dev\\shop"),
        ("/Users/ann/code/shop", ["main"], None),
        ("/main", [], None),  # a folder above is needed
        ("/home/me/app/worktrees/fix-x/web", ["fix-x"], "/home/me/app"),
        ("/Users/ann/dev/shop", ["dev"], None),  # a folder named like a branch, not a worktree
        # a folder of worktrees beside the repository, named after it
        (
            "/home/me/projects/spotter-worktrees/spotter-gqc",
            ["spotter-gqc"],
            "/home/me/projects/spotter",
        ),
        ("D:\\src\\api_worktrees\\fix-x\\cmd", ["fix-x"], "D:\\src\\api"),
        ("/home/me/projects/spotter-worktrees/notes", ["spotter-gqc"], None),
    ],
)
def test_the_repository_of_a_folder_named_after_a_branch(
    cwd: str, branches: list[str], main: str | None
) -> None:
    assert repo.branch_worktree_main(cwd, branches) == main


def test_a_folder_named_after_a_branch_moves_only_a_session_started_in_a_repository(
    tmp_path: Path,
) -> None:
    step = ("/home/me/shop/main", "npm test", "ok")
    assert _project(_transcript(tmp_path, step, branch="fix/login")) == "/home/me/shop"
    assert _project(_transcript(tmp_path, step)) == "/home/me/shop/main"


@pytest.mark.parametrize(
    ("cwd", "main"),
    [
        ("/Users/ann/code/shop/.worktrees/fix-login", "/Users/ann/code/shop"),
        ("/Users/ann/code/shop/.worktrees/feat/x/web", "/Users/ann/code/shop"),
        ("/Users/ann/.cursor/worktrees/shop/a1b2c", "/Users/ann/.cursor/worktrees/shop"),
        ("/Users/ann/code/shop/.worktrees", None),
    ],
)
def test_worktree_tools_layouts(cwd: str, main: str | None) -> None:
    assert repo.worktree_main(cwd) == main


@pytest.mark.parametrize(
    ("command", "cwd", "folders"),
    [
        ("git status", "/home/me/a", [("/home/me/a", False)]),
        ("cd ~/b && git log", "/home/me/a", [("/home/me/b", False)]),
        ("cd '/srv/my repo'; git add .", "/home/me/a", [("/srv/my repo", False)]),
        ("git -C sub/x commit -m x", "/home/me/a", [("/home/me/a/sub/x", True)]),
        ("cd .. && git -C c status", "/home/me/a", [("/home/me/c", False)]),
        ("cd ~/b && git log", "/opt/ci", [(None, False)]),  # no home directory to read `~` from
        ("cd - && git commit -m x", "/home/me/a", [(None, True)]),
        ('cd "$DIR" && git commit -m x', "/home/me/a", [(None, True)]),
        (
            "cd /tmp && git clone u r && cd r && git commit -m x",
            "/home/me/a",
            [("/tmp/r", True)],  # a clone makes a repository: it reads none
        ),
        (
            "git -C /a/b status && git -C /a/c commit -m x",
            "/home/me",
            [("/a/b", False), ("/a/c", True)],
        ),
        (
            "cd ..\\lib && git status",
            "C:\\Users\\me\\dev\\app",
            [("C:\\Users\\me\\dev\\lib", False)],
        ),
        # `popd` goes back to the folder before the push; PowerShell's cmdlets alike, any case
        (
            "pushd /a/b && git commit -m x; popd; git log",
            "/home/me",
            [("/a/b", True), ("/home/me", False)],
        ),
        (
            'Push-Location "C:\\w\\site"\ngit commit -m x\npop-location\ngit status',
            "C:\\w",
            [("C:\\w\\site", True), ("C:\\w", False)],
        ),
        ("Set-Location api; git status", "C:\\w", [("C:\\w\\api", False)]),
        ("popd; git status", "/home/me", [(None, False)]),  # back to a folder not known
    ],
)
def test_the_folder_each_git_ran_in(
    command: str, cwd: str, folders: list[tuple[str | None, bool]]
) -> None:
    assert git_folders(command, cwd) == folders


def test_home_of_a_path() -> None:
    assert repo.home_of("/Users/ann/code/x") == "/Users/ann"
    assert repo.home_of("C:\\Users\\Ann\\dev") == "C:\\Users\\Ann"
    assert repo.home_of("/root/x") == "/root"
    assert repo.home_of("/mnt/c/Users/ann/x") is None  # `~` there is the Linux home
    assert repo.home_of("/srv/x") is None


def test_a_session_that_worked_nowhere_is_about_the_one_folder_its_requests_name() -> None:
    # started in System32, edited nothing; asked "Tienes acceso a C:\\Proyectos\\Jarvis ?" and
    # named Documents and System32 too, which are no project's
    assert _project(REAL / SYSTEM_FOLDER) == "C:\\Proyectos\\Jarvis"


@pytest.mark.parametrize(
    ("text", "cwd", "named"),
    [
        (
            "can you open C:\\Proyectos\\Jarvis ?",
            "C:\\Windows\\System32",
            ["C:\\Proyectos\\Jarvis"],
        ),
        (
            "look at ~/code/app and /home/me/work/api.",
            "/home/me",
            ["/home/me/code/app", "/home/me/work/api"],
        ),
        ("read C:\\Users\\ann\\Documents and C:\\Windows\\System32", "C:\\Users\\ann", []),
        (
            "fetch https://example.com/a/b and src/app/x",
            "/home/me",
            [],
        ),  # an address, a relative path
        ("save it to /tmp/out/x or ~/.config/tool/y", "/home/me", []),  # scratch and hidden folders
        ("run /home/me/app/main.py", "/home/me", []),  # a file, not a folder
        ("open /usr/lib/python3/dist-packages/six", "/home/me", []),  # a library's
        # pasted script text on Windows: a regular expression, not a folder of that machine
        ("fix: md.replace(/ERR_BLOCKED_BY_CLIENT/g, '')", "C:\\Users\\ann\\Documents", []),
        ("look in /c/work/app", "C:\\Users\\ann", ["C:\\work\\app"]),  # Git Bash's drive
        # from WSL or a Linux shell, a Windows folder is the person's too
        ("look in C:\\Proyectos\\Jarvis", "/mnt/c/Users/ann", ["C:\\Proyectos\\Jarvis"]),
    ],
)
def test_the_folders_a_request_names(text: str, cwd: str, named: list[str]) -> None:
    assert repo.folders_named(text, cwd) == named


def test_a_home_session_that_edited_nothing_works_where_its_shell_went(tmp_path: Path) -> None:
    # Claude Code writes each record's cwd after a `cd`: from the home directory into one
    # project (and a folder of it), where tests ran and nothing was edited or committed
    home, app = "/home/me", "/home/me/code/app"
    calls = (
        (home, "cd code/app && npm test", "12 passing"),
        (app, "cd server && npm test", "3 passing"),
        (f"{app}/server", "npm run lint", "ok"),
    )
    assert _project(_transcript(tmp_path, *calls)) == app
    # into two projects: neither is the session's; into a scratch or hidden folder: none
    other = ("/home/me/code/blog", "npm test", "1 passing")
    assert _project(_transcript(tmp_path, *calls, other)) is None
    scratch = (home, "cd /tmp/x && ls", ""), ("/tmp/x", "ls", ""), ("/home/me/.config/x", "ls", "")
    assert _project(_transcript(tmp_path, *scratch)) is None


@pytest.mark.parametrize(
    ("path", "library"),
    [
        ("/Users/liza/Library/Python/3.9/bin/yt-dlp", True),  # a program installed for the user
        ("C:\\Users\\me\\AppData\\Local\\app\\settings.json", True),
        ("/home/me/app/.venv/lib/python3.12/site-packages/flask/app.py", True),
        ("/Users/liza/Desktop/course/notes.md", False),
        ("/home/me/Library/catalogue.md", False),  # a folder of that name on Linux is the user's
        ("/Users/liza/code/Library/index.ts", False),
    ],
)
def test_what_programs_keep_in_the_account_is_no_project(path: str, library: bool) -> None:
    assert repo.is_library_path(path) is library


@pytest.mark.parametrize(
    "edited",
    ["/home/u/'/notes.md", "/home/u/ /x.py", '/home/u/Desktop/"/x', "C:\\Users\\me\\ \\x.py"],
)
def test_an_edit_below_a_folder_named_by_a_quote_or_a_space_places_the_session_nowhere(
    edited: str,
) -> None:
    # such a name resolves to the home folder again; the search for a folder below ends there
    home = "C:\\Users\\me" if edited.startswith("C:") else "/home/u"
    with ends_within(30):
        assert repo.folder_worked_in(home, [edited]) is None


def test_a_project_laid_out_in_the_home_folder_and_moved_into_a_folder_of_its_own_is_there() -> (
    None
):
    # started in the home folder, it wrote `src\\model.py`, `app.py` and the rest there, then
    # `mkdir "Morphing Detection Project"` and `mv src "Morphing Detection Project/"`, file by
    # file and folder by folder: the work is where the files went, not in `src`
    assert _placed(GATHERED_INTO_FOLDER) == (
        "C:\\Users\\User\\Morphing Detection Project",
        "Morphing Detection Project",
    )


def test_a_project_set_up_in_the_home_folder_itself_is_named_by_its_manifest() -> None:
    # started in the home folder, it wrote `package.json` ("name": "osce-lesson-system"), a
    # README and `.env.example` there, and the code in `src`, `scripts`, `database`: the home
    # folder holds the project, which its manifest names
    assert _placed(LAID_OUT_IN_HOME) == ("C:\\Users\\lu801", "osce-lesson-system")


HOME = "/home/me"


def _home_session(tmp_path: Path, *steps: tuple[str, str]) -> tuple[str | None, str | None]:
    """(project path, name) of a session started in a home folder that wrote each ("write",
    path; "rejected", one the person turned down) and ran each ("run", command; "failed", one
    whose result is an error), in order."""
    records = [_record(0, HOME, "user", "set up the app")]
    for n, (how, what) in enumerate(steps, start=1):
        if how in ("run", "failed"):
            call, result = _bash(2 * n, HOME, what, "")
            result["message"]["content"][0]["is_error"] = how == "failed"
            records += [call, result]
            continue
        path, _, content = what.partition("=")
        tool_input = {"file_path": path, "content": content}
        call = {"type": "tool_use", "id": f"w{n}", "name": "Write", "input": tool_input}
        result = {"type": "tool_result", "tool_use_id": f"w{n}", "content": "File created"}
        if how == "rejected":
            result.update(content="The user doesn't want to proceed", is_error=True)
        records += [
            _record(2 * n, HOME, "assistant", [call]),
            _record(2 * n + 1, HOME, "user", [result]),
        ]
    for n, r in enumerate(records):  # a second apart, however many
        r["timestamp"] = f"2026-11-04T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    [group] = transcript_groups([path.resolve()])
    [session] = transcript_sessions(group)
    return session.project_path, session.project


def test_edits_count_where_the_shell_moved_them(tmp_path: Path) -> None:
    src = ("write", f"{HOME}/src/a.py")
    assert _home_session(tmp_path, src) == (f"{HOME}/src", "src")
    moved = ("run", "mkdir shop && mv src README.md shop/")
    assert _home_session(tmp_path, src, moved) == (f"{HOME}/shop", "shop")
    # renamed: the folder's new name
    assert _home_session(tmp_path, src, ("run", "mv src shop")) == (f"{HOME}/shop", "shop")
    # a move before the edit moved nothing of it: the file was written where it is
    assert _home_session(tmp_path, ("run", "mv src shop"), src) == (f"{HOME}/src", "src")
    # what the shell expands cannot be followed
    assert _home_session(tmp_path, src, ("run", "mv src/* shop/")) == (f"{HOME}/src", "src")
    # into a folder the session made, a single file too
    into = ("run", "mkdir shop && mv app.py shop")
    assert _home_session(tmp_path, ("write", f"{HOME}/app.py"), into) == (f"{HOME}/shop", "shop")
    # a move that failed, or that the person rejected, moved nothing
    assert _home_session(tmp_path, src, ("failed", "mv src shop")) == (f"{HOME}/src", "src")
    # the shell's redirections are no folder (`2>/dev/null` names no `2`)
    quiet = ("run", "mkdir -p shop 2>/dev/null && mv src shop/ 2>/dev/null")
    assert _home_session(tmp_path, src, quiet) == (f"{HOME}/shop", "shop")


def test_a_manifest_written_in_the_home_folder_makes_it_the_project(tmp_path: Path) -> None:
    manifest = ("write", f'{HOME}/package.json={{"name": "@me/ledger", "version": "1.0.0"}}')
    code = ("write", f"{HOME}/src/index.js")
    assert _home_session(tmp_path, manifest, code) == (HOME, "ledger")
    # the folder edited most has a manifest of its own: that folder is the project
    app = ("write", f'{HOME}/app/package.json={{"name": "app"}}')
    assert _home_session(tmp_path, manifest, app, ("write", f"{HOME}/app/x.js"))[0] == (
        f"{HOME}/app"
    )
    # the manifest gathered with the code into a folder of its own: that folder
    gathered = ("run", "mkdir shop && mv package.json src shop/")
    assert _home_session(tmp_path, manifest, code, gathered) == (f"{HOME}/shop", "shop")
    # a manifest the person would not have written says nothing
    turned_down = ("rejected", manifest[1])
    assert _home_session(tmp_path, turned_down, code) == (f"{HOME}/src", "src")
    # a manifest with no plain name says nothing
    unnamed = ("write", f'{HOME}/package.json={{"name": "{{{{name}}}}"}}')
    assert _home_session(tmp_path, unnamed, code) == (f"{HOME}/src", "src")


@pytest.mark.parametrize(
    ("command", "moved"),
    [
        ("mv src app.py shop/", [("/w/src", "/w/shop/src"), ("/w/app.py", "/w/shop/app.py")]),
        ("mv src shop", [("/w/src", "/w/shop")]),
        ('mv "a b" "My Project/"', [("/w/a b", "/w/My Project/a b")]),
        ("mv -f -t out a b", [("/w/a", "/w/out/a"), ("/w/b", "/w/out/b")]),
        ("mv --target-directory=out a", [("/w/a", "/w/out/a")]),
        ("cd /srv && git mv old.py new.py", [("/srv/old.py", "/srv/new.py")]),
        ("sudo mv x /opt/y", [("/w/x", "/opt/y")]),
        ("mv src/* shop/", []),  # what the shell expands is not spelled out
        ("mv src shop/ 2>/dev/null", [("/w/src", "/w/shop/src")]),
        ("mv -vt out a", [("/w/a", "/w/out/a")]),
        ("mv -S .bak a b", [("/w/a", "/w/b")]),
        ("mv --suffix .bak a b", [("/w/a", "/w/b")]),
        ("git mv -n a b", []),  # a dry run
        ("mv a " + "x" * 1001, []),  # a name no one keeps
        ("mv x", []),
        ("echo mv a b", []),
        ("ssh host 'mv a b'", []),  # moved on another machine
        ("cat > s.sh <<'EOF'\nmv a b\nEOF", []),  # a file's text, not run here
        # lines continued with a backslash are one command
        ("mkdir -p shop && mv \\\n  src \\\n  shop/", [("/w/src", "/w/shop/src")]),
    ],
)
def test_what_a_mv_moves(command: str, moved: list[tuple[str, str]]) -> None:
    assert moved_paths(command, "/w") == moved


@pytest.mark.parametrize(
    ("file_name", "content", "name"),
    [
        ("package.json", '{"name": "osce-lesson-system"}', "osce-lesson-system"),
        ("package.json", '{"name": "@acme/web"}', "web"),
        ("composer.json", '{"name": "acme/shop"}', "shop"),
        ("pyproject.toml", '[project]\nname = "ledger"\n', "ledger"),
        ("pyproject.toml", '[tool.poetry]\nname = "ledger"\n', "ledger"),
        ("Cargo.toml", '[package]\nname = "sift"\nversion = "0.1.0"\n', "sift"),
        ("go.mod", "module github.com/me/relay\n\ngo 1.22\n", "relay"),
        ("go.mod", "module github.com/me/relay/v2\n", "relay"),  # a major version's path
        ("go.mod", 'module "github.com/me/relay"\n', "relay"),  # quoted
        ("package.json", '{"name": "{{name}}"}', None),  # a template's placeholder
        ("package.json", '{"name": "app\\n"}', None),
        ("pyproject.toml", "x = " + "[" * 5000 + "]" * 5000, None),  # nested past recursion
        ("package.json", '{"private": true}', None),
        ("package.json", "{not json", None),
        ("pyproject.toml", "[project\nname=", None),
        ("pyproject.toml", 'project = "x"\n', None),
        ("README.md", "# name", None),
    ],
)
def test_the_name_a_manifest_declares(file_name: str, content: str, name: str | None) -> None:
    assert manifest_name(file_name, content) == name


def test_a_session_of_thousands_of_moves_is_placed_in_bounded_time(tmp_path: Path) -> None:
    # each move is compared with every edit before it: only the first hundred moves are
    # followed, and the edits where the first of them took them place the session
    edits = [("write", f"{HOME}/src/m{n}.py") for n in range(3000)]
    moves = [("run", f"mv x{n} y{n}") for n in range(3000)]
    with ends_within(30):
        assert _home_session(tmp_path, *edits, ("run", "mv src shop"), *moves)[0] == f"{HOME}/shop"


def test_moves_that_would_lengthen_the_paths_without_end_are_placed_in_bounded_time(
    tmp_path: Path,
) -> None:
    # each move takes the folder before into one of a name of 900 characters: past the first, a
    # path moved would be longer than anyone's, and the move is not followed
    edits = [("write", f"{HOME}/a/m{n}.py") for n in range(3000)]
    names = ["a", *(chr(ord("b") + k % 20) * 900 + str(k) for k in range(100))]
    moves = [("run", f"mv {before} {after}/") for before, after in itertools.pairwise(names)]
    with ends_within(30):
        assert _home_session(tmp_path, *edits, *moves)[0] == f"{HOME}/{names[1]}"


def test_a_home_that_is_a_checkout_is_the_project_where_its_own_files_were_edited(
    tmp_path: Path,
) -> None:
    # a bot's service account: /home/riskbot is its repository (Claude Code found its branch)
    home = "/home/riskbot"
    files = (f"{home}/riskbot.js", f"{home}/modules/signup.js", f"{home}/modules/staff.js")
    where = {"written_in": home}
    listed = [(home, "ls", "riskbot.js modules")]
    assert _session_of(tmp_path, listed, files, branch="main", **where)[0] == home
    # no repository where it started: the folder most edits are in
    assert _session_of(tmp_path, listed, files, **where)[0] == f"{home}/modules"
    # only the folders of the repository edited: the work is in one of them
    assert _session_of(tmp_path, listed, files[1:], branch="main", **where)[0] == f"{home}/modules"
    # root's home is named after no one: not a project by this
    root = ("/root/app.js", "/root/modules/a.js", "/root/modules/b.js")
    in_root = {"written_in": "/root"}
    assert _session_of(tmp_path, [("/root", "ls", "")], root, branch="main", **in_root)[0] == (
        "/root/modules"
    )
