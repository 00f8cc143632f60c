"""Where people start a tool without being in a repository: the home directory and the folders
the system makes in it are no project; the folder there a session worked in is."""

from __future__ import annotations

import pytest

from yzos_jobs.importers.repository import folder_worked_in, is_account_folder, project_edited


@pytest.mark.parametrize(
    "path",
    [
        "/Users/ann",
        "/Users/ann/Desktop",
        "/home/ann/Downloads",
        "/root",
        "/mnt/c/Users/ann.lee",
        r"C:\Users\Ann",
        r"c:\users\ann\documents",
        # where a terminal opens that is nobody's project: a file system's root, Windows' folder
        "/",
        "C:\\",
        r"C:\Windows\System32",
    ],
)
def test_homes_and_their_system_folders_are_account_folders(path: str) -> None:
    assert is_account_folder(path)


@pytest.mark.parametrize(
    "path",
    [
        "/Users",
        "/Users/ann/Code",
        "/Users/ann/Documents/app",
        "/home/ann/src/app",
        "/srv/app",
        r"C:\Users\Ann\source\repos\app",
        r"D:\work",
        "Users/ann",
    ],
)
def test_folders_people_keep_repositories_in_are_not(path: str) -> None:
    assert not is_account_folder(path)


def test_the_folder_worked_in_is_where_most_edits_are_and_hidden_folders_are_not() -> None:
    edited = [
        "/Users/ann/.claude/plans/plan.md",
        "/Users/ann/notes/todo.md",
        "/Users/ann/app/src/main.ts",
        "/Users/ann/app/package.json",
        "/Users/ann/top.txt",  # in the home directory itself
        r"C:\elsewhere\x.py",
    ]
    assert folder_worked_in("/Users/ann", edited) == "/Users/ann/app"
    assert folder_worked_in("/Users/ann", edited[:1] + edited[4:]) is None
    assert folder_worked_in(r"C:\Users\Ann", [r"c:\users\ann\site\index.html"]) == (
        r"C:\Users\Ann\site"
    )


def test_an_account_folder_is_never_the_folder_worked_in() -> None:
    # started in the home directory, the work on the desktop: the project folder there
    edited = ["/Users/ann/Desktop/app/src/main.ts", "/Users/ann/Desktop/app/package.json"]
    assert folder_worked_in("/Users/ann", edited) == "/Users/ann/Desktop/app"
    assert folder_worked_in("/Users/ann", ["/Users/ann/Desktop/todo.txt"]) is None


def test_in_a_folder_that_holds_projects_the_project_is_the_one_edited() -> None:
    edited = [
        "/home/me/projects/axiom/src/app.tsx",
        "/home/me/projects/axiom/package.json",
        "/home/me/projects/axiom-plan/plan.md",
    ]
    assert project_edited("/home/me", edited) == "/home/me/projects/axiom"
    documents = [r"C:\Users\Ann\Documents\GitHub\site\index.html"]
    assert project_edited(r"C:\Users\Ann", documents) == r"C:\Users\Ann\Documents\GitHub\site"
    # a file kept in it directly, or a project of that name elsewhere, is what it is
    assert project_edited("/home/me", ["/home/me/projects/notes.md"]) == "/home/me/projects"
    assert project_edited("/home/me", ["/home/me/app/code/x.py"]) == "/home/me/app"


def test_from_a_root_or_windows_folder_the_edits_are_looked_for_past_the_homes() -> None:
    assert folder_worked_in("/", ["/home/me/app/src/login.py", "/home/me/app/a.py"]) == (
        "/home/me/app"
    )
    edited = [r"C:\Users\ann\shop\a.py"]
    assert folder_worked_in(r"C:\Windows\System32", edited) == r"C:\Users\ann\shop"
