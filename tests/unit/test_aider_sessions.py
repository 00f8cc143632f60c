"""How an aider history's structure is read where the real corpus has no example of it: the mode
requests are sent in, and the repository of a history that sits in no repository's root."""

from __future__ import annotations

from pathlib import Path

from yzos_jobs.importers.aider_history import history_sessions
from yzos_jobs.importers.aider_repository import spread_root
from yzos_jobs.importers.closed_session import ClosedSession

HEADER = "# aider chat started at 2026-11-04 10:00:00\n\n"


def sessions(tmp_path: Path, body: str, folder: str = "notes") -> list[ClosedSession]:
    history = tmp_path / folder / ".aider.chat.history.md"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text(HEADER + body, encoding="utf-8")
    return history_sessions(history)


def test_requests_sent_while_ask_mode_is_on_are_questions(tmp_path: Path) -> None:
    [session] = sessions(
        tmp_path,
        "#### /ask\n\n"
        "#### explain the caching layer in detail\n\nIt keeps verdicts.\n\n"
        "#### /code add a cache hit counter to the status page\n\nSure.\n\n"
        "#### walk me through the retry logic\n\nIt backs off.\n\n"
        "#### /chat-mode code\n\n"
        "#### describe how sessions are closed\n\nBy idleness.\n\n",
    )
    assert [r.title for r in session.idle_questions()] == [
        "explain the caching layer in detail",
        "walk me through the retry logic",
    ]
    # a one-off `/code` request in ask mode, and a request after the mode went back to code
    assert [t.title for t in session.tasks()] == ["add a cache hit counter to the status page"]
    assert [r.line for r in session.tasks()[0].item.requests] == [9, 19]


def test_ask_mode_given_on_the_command_line_or_by_chat_mode(tmp_path: Path) -> None:
    [session] = sessions(
        tmp_path,
        "> aider --chat-mode ask --model sonnet\n> Git repo: .git with 10 files\n\n"
        "#### describe how sessions are closed\n\nBy idleness.\n\n",
    )
    assert [r.title for r in session.idle_questions()] == ["describe how sessions are closed"]
    assert session.tasks() == []
    [session] = sessions(
        tmp_path / "chat-mode",
        "#### /chat-mode ask\n\n#### describe how sessions are closed\n\nBy idleness.\n\n",
    )
    assert [r.title for r in session.idle_questions()] == ["describe how sessions are closed"]


def test_a_question_cut_at_the_title_bound_is_still_a_question(tmp_path: Path) -> None:
    long = "why does the " + "very " * 70 + "long build fail?"
    [session] = sessions(tmp_path, f"#### {long}\n\nBecause.\n\n")
    assert session.tasks() == [] and len(session.idle_questions()) == 1


def test_a_run_directory_without_git_is_no_repository(tmp_path: Path) -> None:
    [session] = sessions(
        tmp_path,
        "> Git repo: none\n\n#### /run cd /var/www/html && ls -la\n\n#### add a footer\n\n",
        folder="scratch",
    )
    assert session.project_path == str(tmp_path / "scratch")


def test_a_run_directory_named_like_its_package_is_the_repository(tmp_path: Path) -> None:
    body = (
        "> Git repo: .git with 12 files\n\n"
        "#### /run cd /Users/me/code/myproj && pytest\n\n"
        "#### fix the failing test\n\n> Applied edit to myproj/core.py\n\n"
    )
    [session] = sessions(tmp_path, body)
    assert session.project_path == "/Users/me/code/myproj"
    # a quoted directory with spaces, and a subfolder the edited file names from the root
    body = body.replace("/Users/me/code/myproj", "/Users/me/My\\ Code/app/backend")
    body = body.replace("myproj/core.py", "backend/app/core.py")
    [session] = sessions(tmp_path / "spaces", body)
    assert session.project_path == "/Users/me/My Code/app"


def test_many_edits_leave_room_for_the_names_that_place_the_root(tmp_path: Path) -> None:
    [session] = sessions(
        tmp_path,
        "> Git repo: .git with 3 files\n\n#### rework the app\n\n"
        + "> Applied edit to app.py\n" * 25
        + "> /Users/me/code/proj/data.bin: 'utf-8' codec can't decode byte 0x89\n"
        + "> Unable to read data.bin\n\n",
        folder="elsewhere",
    )
    assert session.project_path == "/Users/me/code/proj"


def test_a_moved_history_takes_the_repository_an_error_shows_not_a_librarys(
    tmp_path: Path,
) -> None:
    # a Node stack pasted: the frame in node_modules names a file called like one aider edited,
    # the app's own frame names where the repository is; the second session shows nothing
    body = (
        "> Git repo: .git with 40 files\n\n"
        "#### fix this crash\n"
        "#### TypeError: cannot read properties of undefined\n"
        "####     at parse (/home/me/web/shop/node_modules/qs/lib/index.js:12:5)\n"
        "####     at handler (/home/me/web/shop/lib/index.js:40:9)\n\n"
        "> Applied edit to lib/index.js\n\n"
        "# aider chat started at 2026-11-04 11:00:00\n\n"
        "> Git repo: .git with 40 files\n\n#### add a health route\n\n"
        "> Applied edit to lib/routes.js\n\n"
    )
    first, second = sessions(tmp_path, body, folder="committed-elsewhere")
    assert first.project_path == second.project_path == "/home/me/web/shop"
    # where a repository's `.git` sits beside the history, the history is at its root
    (tmp_path / "committed-elsewhere" / ".git").mkdir()
    assert sessions(tmp_path, body, folder="committed-elsewhere")[0].project_path == str(
        tmp_path / "committed-elsewhere"
    )


def _one_project(tmp_path: Path, body: str) -> str | None:
    [session] = sessions(tmp_path, "> Git repo: .git with 9 files\n\n" + body, folder="moved")
    return session.project_path


def test_a_file_added_read_only_places_a_moved_history_only_with_support(tmp_path: Path) -> None:
    # one file read from another project, called like the one edited: no repository shown
    edited = "\n> Applied edit to app.py\n\n"
    one = "> Added /home/me/old-app/app.py to read-only files.\n"
    assert _one_project(tmp_path / "a", one + "#### port it" + edited) == str(tmp_path / "a/moved")
    # two files that agree, or one named with its folder, do
    two = one + "> Added /home/me/old-app/util.py to read-only files.\n"
    body = two + "#### port it\n\n> Applied edit to app.py\n> Applied edit to util.py\n\n"
    assert _one_project(tmp_path / "b", body) == "/home/me/old-app"
    nested = "> Added /home/me/app/src/app.py to read-only files.\n\n#### port it\n\n"
    assert (
        _one_project(tmp_path / "c", nested + "> Applied edit to src/app.py\n\n") == "/home/me/app"
    )


def test_a_traceback_through_a_languages_own_files_places_nothing(tmp_path: Path) -> None:
    frames = [
        'File "/usr/lib/python3.11/http/server.py", line 3',
        'File "/home/me/.pyenv/versions/3.11.4/lib/python3.11/logging/config.py", line 9',
        "/home/me/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/server.go:174",
        "/app/server.py:3",  # a container's folder, not a repository's
    ]
    for n, frame in enumerate(frames):
        edits = "> Applied edit to server.py\n> Applied edit to config.py\n\n"
        body = f"#### fix this\n#### {frame}\n\n{edits}"
        where = tmp_path / str(n)
        assert _one_project(where, body) == str(where / "moved"), frame


def test_a_traceback_with_spaces_in_its_path_places_the_repository(tmp_path: Path) -> None:
    frame = 'File "C:\\Users\\John Smith\\proj\\App.py", line 3, in <module>'
    body = f"#### fix this\n#### {frame}\n\n> Applied edit to app.py\n\n"
    assert _one_project(tmp_path, body) == "C:\\Users\\John Smith\\proj"


def test_the_repository_most_of_the_edited_files_are_in_wins(tmp_path: Path) -> None:
    # a frame in a dependency installed from its checkout, then the app's own frames
    frames = (
        "#### /home/me/libfoo/utils.py:3\n#### /home/me/real/app.py:9\n"
        "#### /home/me/real/models.py:12\n\n"
    )
    edits = "> Applied edit to utils.py\n> Applied edit to app.py\n> Applied edit to models.py\n\n"
    assert _one_project(tmp_path, "#### fix this\n" + frames + edits) == "/home/me/real"


def test_undecodable_files_of_one_folder_do_not_place_the_root(tmp_path: Path) -> None:
    scan = "".join(
        f"> /srv/games/otserv/data/locales/{lang}.lua: 'utf-8' codec can't decode byte 0xfc\n"
        for lang in ("de", "es", "pt")
    )
    assert _one_project(tmp_path / "one", scan + "\n#### start the server\n\n") == str(
        tmp_path / "one/moved"
    )
    # in two folders of it, they do
    spread = scan + "> /srv/games/otserv/client/ui.lua: 'utf-8' codec can't decode byte 0xe7\n"
    assert _one_project(tmp_path / "two", spread + "\n#### start the server\n\n") == (
        "/srv/games/otserv"
    )


def test_without_git_an_error_elsewhere_moves_nothing(tmp_path: Path) -> None:
    body = '> Git repo: none\n\n#### fix\n#### File "/srv/deploy/app/x.py", line 3\n\n'
    [session] = sessions(tmp_path, body + "> Applied edit to x.py\n\n", folder="scratch")
    assert session.project_path == str(tmp_path / "scratch")


def test_edits_after_a_request_too_short_to_name_go_on_with_the_last_work_item(
    tmp_path: Path,
) -> None:
    [session] = sessions(
        tmp_path,
        "#### add a footer to the page\n\n> Applied edit to page.html\n\n"
        "#### continue\n\n> Applied edit to page.css\n\n",
    )
    [task] = session.tasks()
    assert task.title == "add a footer to the page"
    assert "request (line 7): continue" in task.context()
    assert "files: page.html, page.css" in task.context()


def test_a_request_asked_again_is_told_by_its_text_not_its_first_line(tmp_path: Path) -> None:
    body = (
        "#### import { z } from 'zod';\n#### export const User = z.object({ name: z.string() });\n"
        "#### add this schema for users to schemas/user.ts\n\n"
        "> Applied edit to schemas/user.ts\n> Commit 1111111 feat: add user schema\n\n"
        "#### import { z } from 'zod';\n"
        "#### export const Order = z.object({ total: z.number() });\n"
        "#### and this one for orders, in schemas/order.ts\n\n"
        "> Applied edit to schemas/order.ts\n> Commit 2222222 feat: add order schema\n\n"
        "#### fix the login bug\n\n"
        "> Applied edit to auth.ts\n> Commit 3333333 fix: trim emails\n\n"
        "#### fix the logout bug\n\nTrying again.\n\n"
        "> Applied edit to auth.ts\n> Commit 4444444 fix: clear cookie\n\n"
        "#### fix the logout bug\n\nTrying again.\n\n"
        "> Applied edit to auth.ts\n> Commit 5555555 fix: expire token\n\n"
    )
    [session] = sessions(tmp_path, body)
    asked_again = 0.7  # the shipped importers.asked_again_similarity
    titles = [t.title for t in session.tasks(asked_again)]
    # two schemas that open with the same pasted line, two bugs a word apart: four tasks; the
    # logout bug asked again after a commit that did not fix it goes on with its task
    assert titles == ["add user schema", "add order schema", "trim emails", "clear cookie"]
    assert len(session.tasks()) == 5


def test_a_file_to_edit_on_the_command_line_places_the_repository_an_option_value_does_not(
    tmp_path: Path,
) -> None:
    startup = "> aider --yes {} /srv/app/main.py\n> Git repo: .git with 3 files\n\n"
    body = "#### make the greeting friendlier\n\nDone.\n\n> Applied edit to main.py\n\n"
    [placed] = sessions(tmp_path / "a", startup.format("--no-auto-commits") + body)
    assert placed.project_path == "/srv/app"
    # `--read /home/me/notes/main.py`: a file to read, wherever it is
    read = "> aider --read /home/me/notes/main.py\n> Git repo: .git with 3 files\n\n"
    [history_root] = sessions(tmp_path / "b", read + body)
    assert history_root.project_path == str(tmp_path / "b" / "notes")


def test_aiders_mode_prompts_copied_before_a_request_are_left_out(tmp_path: Path) -> None:
    [session] = sessions(
        tmp_path,
        "#### ask> why does the cache miss?\n\nIt expires.\n\n"
        "#### architect> split the cache by tenant\n\nSure.\n\n> Applied edit to cache.py\n\n",
    )
    titles = [e.title for e in session.events if hasattr(e, "title")]
    assert titles == ["why does the cache miss?", "split the cache by tenant"]


def test_only_aiders_start_up_block_pasted_back_is_set_aside(tmp_path: Path) -> None:
    [session] = sessions(
        tmp_path,
        "> Aider v0.86.1\n> Main model: sonnet with diff edit format\n> Git repo: .git\n\n"
        "#### /run pytest\n\n> FAILED tests/test_cache.py::test_expiry\n\n"
        "#### Aider v0.86.1\n\nHello.\n\n"
        "#### FAILED tests/test_cache.py::test_expiry\n\nFixing.\n\n> Applied edit to cache.py\n\n",
    )
    asked = [r.text for e in [session] for r in e.events if hasattr(r, "text")]
    assert asked == ["FAILED tests/test_cache.py::test_expiry"]


def test_the_folder_printed_files_spread_out_from_needs_them_in_two_folders() -> None:
    assert spread_root(["/home/me/p/a/x.py", "/home/me/p/b/y.py", "/home/me/p/b/z.py"]) == (
        "/home/me/p"
    )
    # two of three go on into folders: too few
    assert spread_root(["/home/me/p/a/x.py", "/home/me/p/b/y.py", "/home/me/p/z.py"]) is None
    # two drives are no one folder; one drive spelled in two cases is
    assert spread_root(["C:\\w\\p\\a\\x.py", "D:\\w\\p\\b\\y.py", "D:\\w\\p\\c\\z.py"]) is None
    assert (
        spread_root(["C:\\W\\P\\a\\x.py", "c:\\w\\p\\b\\y.py", "C:\\w\\p\\c\\z.py"]) == "C:\\W\\P"
    )


def test_a_git_command_aider_printed_places_a_moved_history(tmp_path: Path) -> None:
    # aider made a file the repository's .gitignore leaves out and printed the `git add` that
    # failed, by the file's absolute path; it asked to create it by its name from the root
    created = (
        "#### add the variables file\n\n"
        "> terraform.tfvars\n> Create new file? [Y/n] y\n"
        "> Cmd('git') failed due to: exit code(1)\n"
        "> cmdline: git add /Users/me/src/infra-live/terraform.tfvars\n\n"
    )
    assert _one_project(tmp_path / "a", created) == "/Users/me/src/infra-live"
    # older versions name the file in the question itself; a commit names its files after `--`
    older = (
        "#### add the module\n\n"
        "> Allow creation of new file modules/net/main.tf? y\n"
        "> cmdline: git commit -m add net module --no-verify -- "
        "/Users/me/src/infra-live/modules/net/main.tf\n\n"
    )
    assert _one_project(tmp_path / "b", older) == "/Users/me/src/infra-live"
    # a path that is no file aider named from the root places nothing
    other = created.replace("infra-live/terraform.tfvars", "infra-live/other.tfvars")
    assert _one_project(tmp_path / "c", other) == str(tmp_path / "c" / "moved")
    # nor does a line before the question that is no file's name
    tokens = created.replace("> terraform.tfvars\n", "> Tokens: 4.1k sent, 224 received.\n")
    tokens = tokens.replace("/terraform.tfvars", "/Tokens: 4.1k sent, 224 received.")
    assert _one_project(tmp_path / "d", tokens) == str(tmp_path / "d" / "moved")


def test_the_files_of_a_failed_commit_are_read_whatever_its_message_holds(tmp_path: Path) -> None:
    # several files in a folder with a space; ` -- ` in the message; the files on the message's
    # last line (a trailer after it)
    edited = "> Applied edit to app/a.py\n> Applied edit to app/b.py\n"
    root = "/Users/me/My Code/proj"
    several = f"cmdline: git commit -m fix it --no-verify -- {root}/app/a.py {root}/app/b.py"
    dashes = (
        f"cmdline: git commit -m docs: see -- /home/me/other/a.py --no-verify -- {root}/app/a.py"
    )
    trailer = (
        "cmdline: git commit -m fix it\n>  \n"
        f"> Co-authored-by: aider <aider@aider.chat> --no-verify -- {root}/app/b.py"
    )
    # with hooks on (`--git-commit-verify`) aider leaves out `--no-verify`; a ` -- ` in the
    # message's first line is no end of its options
    verified = trailer.replace(" --no-verify", "")
    dashed = trailer.replace("fix it\n", "fix: accept -- as end of options\n")
    for n, command in enumerate((several, dashes, trailer, verified, dashed)):
        body = f"#### fix it\n\n{edited}> Unable to commit: Cmd('git') failed\n> {command}\n\n"
        assert _one_project(tmp_path / str(n), body) == root, command


def test_only_the_failed_commands_lines_are_read_for_its_paths(tmp_path: Path) -> None:
    # a `/commit` fails with no files named; a later reply prints a path after ` -- `
    body = (
        "#### fix it\n\n> Applied edit to app/a.py\n"
        "> Unable to commit: Cmd('git') failed\n> cmdline: git commit -a -m fix it\n"
        "> stderr: 'hook failed'\n\n"
        "#### and this\n\n> Applied edit to app/a.py\n"
        "> Running: tool --no-verify -- /home/other/elsewhere/app/a.py\n\n"
    )
    assert _one_project(tmp_path, body) == str(tmp_path / "moved")


def test_a_path_printed_after_many_files_were_added_pairs_with_its_name(tmp_path: Path) -> None:
    added = "".join(f"> Added f{n:02d}.py to the chat.\n" for n in range(1, 26))
    [session] = sessions(
        tmp_path,
        "> Git repo: .git with 30 files\n" + added + "\n#### please fix the parser in f25\n\n"
        "> /home/u/proj/f25.py: [Errno 13] Permission denied\n\n",
        folder="moved",
    )
    assert session.project_path == "/home/u/proj"
