"""Bad records cost only themselves: each is one line on stderr
naming its file and line, the others are imported, and the next run neither fails nor repeats."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from tests.adversarial.importing import (
    candidate_texts,
    cc_edit,
    cc_line,
    idle_config,
    import_transcripts,
    jsonl_line,
    only_skipped_at,
    requests_seen,
    run_import,
    session_ids,
    where,
)
from tests.support.cli import cli_env, run_cli
from tests.support.jobs import make_ctx
from yzos_jobs.db.models import ActivitySession, AppMetadataRow, ImporterSeen

pytestmark = pytest.mark.adversarial

DEEP = 100_000
LONE = "\ud800"  # a lone surrogate: json.dumps writes it as the escape \ud800


def _imports_cleanly(tmp_path: Path, db_url: str) -> None:
    """Import the Claude Code transcripts below `tmp_path/projects`: nothing skipped."""
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0 and imported.skipped == [], imported.stderr[-2000:]


def _rerun_is_quiet(importer: str, path: Path, db_url: str, tmp_path: Path) -> None:
    """The file is not blocked: the next run succeeds, reports nothing, imports nothing."""
    before = candidate_texts(db_url)
    again = run_import(importer, path, db_url=db_url, cwd=tmp_path)
    assert again.returncode == 0 and again.skipped == [], again.stderr[-2000:]
    assert candidate_texts(db_url) == before


# --- 2. nesting past the recursion limit ------------------------------------------------------


def test_jsonl_line_nested_100000_deep_is_one_line_and_the_file_goes_on(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "deep.jsonl"
    deep = '{"record_id": "r2", "session_id": "s1", "type": "candidate", "raw_text": '
    deep += "[" * DEEP + "]" * DEEP + "}\n"
    path.write_text(jsonl_line("r1", "First good record") + deep + jsonl_line("r3", "Last one"))
    first = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert first.returncode == 0
    only_skipped_at(first, where(path, 2))
    assert "nested too deeply" in first.skipped[0]
    assert candidate_texts(db_url) == ["First good record", "Last one"]
    _rerun_is_quiet("jsonl", path, db_url, tmp_path)


def test_claude_code_line_nested_100000_deep_is_one_line_and_the_file_goes_on(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "projects" / "-home-me" / "sess-1.jsonl"
    path.parent.mkdir(parents=True)
    deep = '{"uuid": "u2", "sessionId": "sess-1", "type": "user", "message": '
    deep += "[" * DEEP + "]" * DEEP + "}\n"
    good = cc_line("u1", "add a retry to the uploader"), cc_line("u3", "ship it now")
    path.write_text(good[0] + deep + good[1])
    first = import_transcripts(tmp_path, db_url)
    assert first.returncode == 0
    only_skipped_at(first, where(path, 2))
    assert {"add a retry to the uploader", "ship it now"} <= set(requests_seen(db_url))
    _rerun_is_quiet("claude-code", tmp_path / "projects", db_url, tmp_path)


# --- 3. lone surrogates ----------------------------------------------------------------------


def test_jsonl_lone_surrogate_in_every_field_is_replaced_and_imported(
    db_url: str, tmp_path: Path
) -> None:
    s = LONE
    records = [
        {
            "record_id": f"r1{s}",
            "session_id": f"s{s}",
            "type": "candidate",
            "raw_text": f"Fix {s} parser",
            "suggested_kind": "task",
            "source_kind": f"clip{s}",
            "app_bundle_id": f"com.example{s}",
            "surrounding_text": f"context {s}",
            "observed_at": "2026-11-04T10:00:00Z",
        },
        {
            "record_id": f"r2{s}",
            "session_id": f"s{s}",
            "type": "app",
            "bundle_id": f"com.app{s}",
            "bundle_name": f"App{s}",
            "category": f"cat{s}",
        },
        {
            "record_id": f"r3{s}",
            "session_id": f"s{s}",
            "type": "triage",
            "projects": [{"name": f"proj{s}ect", "path": f"/p/{s}", "summary": f"sum{s}"}],
            "tasks": [{"title": f"Write {s} tests", "project": f"proj{s}ect", "summary": s}],
            "persons": [{"name": f"Ann {s}"}],
        },
        {"record_id": f"r4{s}", "session_id": f"s{s}", "type": "session_end"},
    ]
    path = tmp_path / "surrogates.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert "\\ud800" in path.read_text()
    imported = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert imported.returncode == 0 and imported.skipped == [], imported.stderr[-2000:]
    assert (imported.counts["records"], imported.counts["triaged"]) == (4, 1)
    assert "Fix \ufffd parser" in candidate_texts(db_url)
    assert session_ids(db_url) == {"s\ufffd"}
    with make_ctx(db_url).sessions() as db:
        app = db.get(AppMetadataRow, "com.app\ufffd")
    assert app is not None and (app.bundle_name, app.category) == ("App\ufffd", "cat\ufffd")
    _rerun_is_quiet("jsonl", path, db_url, tmp_path)


def test_claude_code_lone_surrogate_in_every_field_is_replaced_and_imported(
    db_url: str, tmp_path: Path
) -> None:
    s = LONE
    path = tmp_path / "projects" / "-home-me" / "sess.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        cc_line(f"u1{s}", f"rename the {s} module", session_id=f"sess{s}", cwd=f"/home/{s}/code")
    )
    _imports_cleanly(tmp_path, db_url)
    assert "rename the \ufffd module" in requests_seen(db_url)
    assert session_ids(db_url) == {"sess\ufffd"}


def test_file_name_that_is_not_utf8_is_imported_and_remembered(db_url: str, tmp_path: Path) -> None:
    feed = tmp_path / "feeds"
    feed.mkdir()
    path = feed / os.fsdecode(b"caf\xe9.jsonl")  # a Latin-1 name on a UTF-8 system
    path.write_text(jsonl_line("r1", "Import the cafe menu"))
    first = run_import("jsonl", feed, db_url=db_url, cwd=tmp_path)
    assert first.returncode == 0 and first.skipped == [], first.stderr[-2000:]
    assert candidate_texts(db_url) == ["Import the cafe menu"]
    again = run_import("jsonl", feed, db_url=db_url, cwd=tmp_path)
    assert again.counts["files_unchanged"] == 1


def test_folder_names_that_are_not_utf8_are_imported_and_remembered(
    db_url: str, tmp_path: Path
) -> None:
    # a repository folder and a Claude Code project folder named in Latin-1 on a UTF-8 system
    repository = tmp_path / "src" / os.fsdecode(b"caf\xe9")
    (repository / ".git").mkdir(parents=True)
    history = repository / ".aider.chat.history.md"
    history.write_text(
        "\n# aider chat started at 2026-01-04 10:00:00\n\n> Aider v0.86.2\n\n"
        "#### add input validation to the signup form\n\n"
        "Applied edit to signup.py\n"
    )
    projects = tmp_path / "projects"
    folder = projects / os.fsdecode(b"-home-me-caf\xe9")
    folder.mkdir(parents=True)
    (folder / "sess.jsonl").write_text(
        cc_line("u1", "add a feature flag for the beta dashboard", cwd="/home/me/cafe")
        + cc_edit("u2", "/home/me/cafe/flags.py")
    )
    config = idle_config(tmp_path)
    for importer, path in (("aider", tmp_path / "src"), ("claude-code", projects)):
        first = run_import(importer, path, db_url=db_url, cwd=tmp_path, config=config)
        assert first.returncode == 0 and first.skipped == [], first.stderr[-2000:]
        again = run_import(importer, path, db_url=db_url, cwd=tmp_path, config=config)
        assert again.counts["files_unchanged"] == 1 and again.skipped == []
    seen = requests_seen(db_url)
    assert "add input validation to the signup form" in seen
    assert "add a feature flag for the beta dashboard" in seen
    with make_ctx(db_url).sessions() as s:
        paths = set(s.scalars(select(ActivitySession.project_path)))
    assert str(tmp_path / "src" / "caf\\xe9") in paths  # its byte kept as an escape


def test_claude_code_cwd_past_the_bound_names_no_project_after_a_fragment(
    db_url: str, tmp_path: Path
) -> None:
    deep = "/home/me/" + "d/" * 600 + "shop"  # 1,213 characters: no folder a database keys
    path = tmp_path / "projects" / "-home-me-d" / "sess.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        cc_line("u1", "add an upload retry to the checkout", cwd=deep)
        + cc_edit("u2", f"{deep}/upload.py").replace("/home/me/code/hostile", deep)
    )
    _imports_cleanly(tmp_path, db_url)
    assert "add an upload retry to the checkout" in requests_seen(db_url)
    with make_ctx(db_url).sessions() as s:
        assert list(s.scalars(select(ActivitySession.project_path))) == [None]


def test_claude_code_session_with_no_timestamp_at_all_says_so(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "projects" / "-home-me" / "sess.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        cc_line("u1", "add an upload retry to the checkout", timestamp=None)
        + cc_edit("u2", "/home/me/code/hostile/upload.py").replace('"2026-11-04T10:00:01Z"', "null")
    )
    result = run_cli(
        "import",
        "claude-code",
        str(tmp_path / "projects"),
        env=cli_env(db_url, YZOS_CONFIG=str(idle_config(tmp_path))),
        cwd=tmp_path,
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert f"note: session 'sess-1' in {path}: no record has a timestamp" in result.stdout


def test_claude_code_tool_call_named_by_a_list_costs_nothing(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "projects" / "-home-me" / "sess.jsonl"
    path.parent.mkdir(parents=True)
    odd = cc_edit("u2", "/home/me/code/hostile/upload.py").replace('"Edit"', '["Edit"]')
    path.write_text(
        cc_line("u1", "add an upload retry to the checkout")
        + odd
        + cc_line("u3", "now write the release notes for it", timestamp="2026-11-04T10:05:00Z")
    )
    _imports_cleanly(tmp_path, db_url)
    assert "now write the release notes for it" in requests_seen(db_url)


# --- 4. timestamps no database holds -----------------------------------------------------------


def _only_the_bad_skipped(
    db_url: str, tmp_path: Path, lines: list[str], bad: tuple[int, ...], why: str
) -> Path:
    """Import `lines` (a JSONL file whose good records are "Before the bad ones" and "After the
    bad ones"): each line of `bad` is one skipped line saying `why`, the good ones are imported."""
    path = tmp_path / "records.jsonl"
    path.write_text("".join(lines))
    imported = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert imported.returncode == 0
    only_skipped_at(imported, *(where(path, n) for n in bad))
    assert all(why in line for line in imported.skipped)
    assert candidate_texts(db_url) == ["Before the bad ones", "After the bad ones"]
    return path


def test_jsonl_timestamps_out_of_range_are_reported_and_skipped(
    db_url: str, tmp_path: Path
) -> None:
    bad = [
        "0001-01-01T00:00:00+14:00",  # year 0 in UTC
        "10000-01-01T00:00:00Z",
        1e20,
        "9999-12-31T23:30:00-05:00",  # year 10000 in UTC
        -1e15,
    ]
    lines = [jsonl_line("good-1", "Before the bad ones", observed_at="2026-11-04T10:00:00Z")]
    lines += [jsonl_line(f"bad-{i}", f"Bad time {i}", observed_at=t) for i, t in enumerate(bad)]
    lines.append(jsonl_line("good-2", "After the bad ones", observed_at=1793790000))
    end = {"record_id": "end", "session_id": "s1", "type": "session_end"}
    lines.append(json.dumps({**end, "ended_at": "0001-01-01T00:00:00+14:00"}) + "\n")
    path = _only_the_bad_skipped(db_url, tmp_path, lines, (2, 3, 4, 5, 6, 8), "not a timestamp")
    _rerun_is_quiet("jsonl", path, db_url, tmp_path)


def test_jsonl_text_fields_that_are_not_strings_are_reported_and_skipped(
    db_url: str, tmp_path: Path
) -> None:
    # a list or an object where text belongs would be stored as Python's text of it
    base = {"session_id": "s1", "type": "candidate", "suggested_kind": "project"}
    app = {"session_id": "s1", "type": "app", "bundle_id": "org.telegram"}
    triage = {"session_id": "s1", "type": "triage"}
    lines = [jsonl_line("good-1", "Before the bad ones")]
    lines += [
        json.dumps({**base, "record_id": "bad-1", "raw_text": ["YZOS Core"]}) + "\n",
        json.dumps({**base, "record_id": "bad-2", "raw_text": {"name": "YZOS Core"}}) + "\n",
        json.dumps({**base, "record_id": "bad-3", "raw_text": "X", "surrounding_text": [1]}) + "\n",
        json.dumps({**base, "record_id": "bad-4", "raw_text": "X", "app_bundle_id": {"b": 2}})
        + "\n",
        json.dumps({**app, "record_id": "bad-5", "bundle_name": ["Telegram"]}) + "\n",
        json.dumps({**triage, "record_id": "bad-6", "projects": [{"name": {"evil": 1}}]}) + "\n",
    ]
    lines.append(jsonl_line("good-2", "After the bad ones"))
    _only_the_bad_skipped(
        db_url, tmp_path, lines, (2, 3, 4, 5, 6, 7), "must be a string, not a JSON"
    )


def test_claude_code_timestamp_out_of_range_is_reported_and_skipped(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "projects" / "-home-me" / "sess-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        cc_line("u1", "add the export command")
        + cc_line("u2", "this one is from year zero", timestamp="0001-01-01T00:00:00+14:00")
        + cc_line("u3", "document the export command")
    )
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0
    only_skipped_at(imported, where(path, 2))
    texts = requests_seen(db_url)
    assert "add the export command" in texts and "document the export command" in texts
    assert "this one is from year zero" not in texts


def test_aider_header_with_impossible_date_costs_only_its_session(
    db_url: str, tmp_path: Path
) -> None:
    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "# aider chat started at 2026-11-04 10:00:00\n\n#### add the login form\n\n"
        "# aider chat started at 2026-13-45 10:00:00\n\n#### from a month that does not exist\n\n"
        "# aider chat started at 2026-11-05 10:00:00\n\n#### add the logout button\n"
    )
    imported = run_import(
        "aider", history, db_url=db_url, cwd=tmp_path, config=idle_config(tmp_path)
    )
    assert imported.returncode == 0
    only_skipped_at(imported, where(history, 5))
    # the line says what is wrong with the date, not only that it is not one
    assert "month must be in 1..12" in imported.skipped[0]
    texts = requests_seen(db_url)
    assert "add the login form" in texts and "add the logout button" in texts
    assert "from a month that does not exist" not in texts


# --- 5. a record the database refuses ----------------------------------------------------------


def _refuse_poison(db_url: str) -> None:
    """A constraint the database enforces on candidates (a trigger standing in for any value a
    database may refuse): a raw_text containing "poison" cannot be inserted."""
    engine = create_engine(db_url)
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            conn.execute(
                text(
                    "CREATE TRIGGER refuse_poison BEFORE INSERT ON entity_candidates "
                    "WHEN NEW.raw_text LIKE '%poison%' "
                    "BEGIN SELECT RAISE(ABORT, 'poison refused'); END"
                )
            )
        else:
            conn.execute(
                text(
                    "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$ "
                    "BEGIN IF NEW.raw_text LIKE '%poison%' THEN "
                    "RAISE EXCEPTION 'poison refused' USING ERRCODE = 'check_violation'; "
                    "END IF; RETURN NEW; END $$"
                )
            )
            conn.execute(
                text(
                    "CREATE TRIGGER refuse_poison BEFORE INSERT ON entity_candidates "
                    "FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
                )
            )
    engine.dispose()


def test_jsonl_record_refused_by_the_database_costs_only_itself(
    db_url: str, tmp_path: Path
) -> None:
    _refuse_poison(db_url)
    poisoned = {7, 1100}  # in the first and the third batch of 500
    path = tmp_path / "feed.jsonl"
    path.write_text(
        "".join(
            jsonl_line(f"r{n}", f"Item {n} poison" if n in poisoned else f"Item {n}")
            for n in range(1, 1201)
        )
    )
    imported = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert imported.returncode == 0
    only_skipped_at(imported, *(where(path, n) for n in sorted(poisoned)))
    assert all("poison refused" in line for line in imported.skipped)
    texts = candidate_texts(db_url)
    assert len(texts) == 1198 and not any("poison" in t for t in texts)
    assert imported.counts["records"] == 1198
    _rerun_is_quiet("jsonl", path, db_url, tmp_path)


def test_claude_code_and_aider_records_refused_by_the_database_cost_only_themselves(
    db_url: str, tmp_path: Path
) -> None:
    _refuse_poison(db_url)
    transcript = tmp_path / "projects" / "-home-me" / "sess-1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(  # three sessions, each a request and its edit: three work items
        cc_line("u1", "add the upload form", "s1")
        + cc_edit("e1", "/home/me/code/hostile/up.py", "s1")
        + cc_line("u2", "feed it the poison input", "s2")
        + cc_edit("e2", "/home/me/code/hostile/pill.py", "s2")
        + cc_line("u3", "add the download link", "s3")
        + cc_edit("e3", "/home/me/code/hostile/down.py", "s3")
    )
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0
    only_skipped_at(imported, where(transcript, 3))
    texts = candidate_texts(db_url)
    assert "add the upload form" in texts and "add the download link" in texts

    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "# aider chat started at 2026-11-04 10:00:00\n\n#### add the search box\n\n"
        "> Applied edit to search.py\n\n"
        "# aider chat started at 2026-11-04 11:00:00\n\n#### remove the poison pill\n\n"
        "> Applied edit to pill.py\n\n"
        "# aider chat started at 2026-11-04 12:00:00\n\n#### add the results page\n\n"
        "> Applied edit to results.py\n"
    )
    aider = run_import("aider", history, db_url=db_url, cwd=tmp_path, config=idle_config(tmp_path))
    assert aider.returncode == 0
    only_skipped_at(aider, where(history, 9))  # the refused request's own line
    texts = candidate_texts(db_url)
    assert "add the search box" in texts and "add the results page" in texts


# --- 13. one record id, two contents -----------------------------------------------------------


def test_jsonl_same_record_id_other_content_first_wins_within_and_across_batches_and_runs(
    db_url: str, tmp_path: Path
) -> None:
    original = jsonl_line("r1", "Alpha as first written")
    lines = [
        original,
        jsonl_line("r1", "Alpha rewritten in the same batch"),
        original,  # the same line again: a copy, not a conflict
        *(jsonl_line(f"f{n}", f"Filler {n}") for n in range(600)),
        jsonl_line("r1", "Alpha rewritten in a later batch"),
    ]
    path = tmp_path / "feed.jsonl"
    path.write_text("".join(lines))
    first = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert first.returncode == 0
    only_skipped_at(first, where(path, 2), where(path, 604))
    assert all("first is kept" in line for line in first.skipped)
    assert first.counts["skipped"] == 1  # the copy
    with path.open("a") as fh:
        fh.write(jsonl_line("r1", "Alpha rewritten in a later run") + original)
    second = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert second.returncode == 0
    only_skipped_at(second, where(path, 605))
    texts = candidate_texts(db_url)
    assert [t for t in texts if t.startswith("Alpha")] == ["Alpha as first written"]


def test_claude_code_repeated_uuid_in_one_batch_keeps_the_first(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "projects" / "-home-me" / "sess-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(cc_line("u1", "add the first feature") + cc_line("u1", "a copy that differs"))
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0 and imported.counts["skipped"] == 1
    texts = requests_seen(db_url)
    assert "add the first feature" in texts and "a copy that differs" not in texts


# --- 14. long ids --------------------------------------------------------------------------


def test_jsonl_long_ids_that_differ_only_at_the_end_stay_apart(db_url: str, tmp_path: Path) -> None:
    long_record, long_session = "r" * 299, "s" * 299
    path = tmp_path / "ids.jsonl"
    path.write_text(
        jsonl_line(long_record + "a", "Long record A", session_id=long_session + "a")
        + jsonl_line(long_record + "b", "Long record B", session_id=long_session + "b")
        + jsonl_line("short-id", "Short record", session_id="short-session")
    )
    imported = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert imported.returncode == 0 and imported.skipped == []
    assert sorted(candidate_texts(db_url)) == ["Long record A", "Long record B", "Short record"]
    assert len(session_ids(db_url)) == 3
    with make_ctx(db_url).sessions() as db:
        keys = set(db.execute(select(ImporterSeen.session_id, ImporterSeen.record_id)))
    assert ("short-session", "short-id") in keys  # short ids are keyed as they always were


def test_claude_code_long_ids_that_differ_only_at_the_end_stay_apart(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "projects" / "-home-me" / "sess.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        cc_line("u" * 299 + "a", "add the first long one", session_id="x" * 299 + "a")
        + cc_line("u" * 299 + "b", "add the second long one", session_id="x" * 299 + "b")
    )
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0 and imported.skipped == []
    texts = requests_seen(db_url)
    assert "add the first long one" in texts and "add the second long one" in texts
    assert len(session_ids(db_url)) == 2
