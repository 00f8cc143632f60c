"""Which shell commands a coding tool ran changed something a person keeps: a request carried
out with them is work done, one answered by reading is not."""

from __future__ import annotations

import pytest

from yzos_jobs.importers.shell_effects import changes_something, only_version_control


@pytest.mark.parametrize(
    "command",
    [
        'ln -s /opt/homebrew/opt/app/App.app /Applications/App.app && echo "Done"',
        "kill 9621 && sleep 1",
        "pkill -f whisper-server 2>/dev/null; sleep 1",
        "cd /srv/app && sed -i 's/8080/9090/' server.conf",
        "perl -pi -e 's/a/b/' notes.txt",
        "sudo rm -rf build",
        "FORCE=1 npm i left-pad",
        "uv add httpx",
        "brew services restart postgresql",
        "echo 'export PATH=$HOME/bin:$PATH' >> ~/.zshrc",
        "cat > notes.md <<'EOF'\ndon't forget\nEOF",
        "ls dist | tee files.txt",
        'ssh root@10.0.0.1 "/etc/init.d/gl-cloud stop && /etc/init.d/gl-cloud disable"',
        "ssh -p 2222 -i ~/.ssh/id router 'opkg remove gl-sdk4-cloud'",
        "ssh router \"uci set system.@system[0].log_size='512' && uci commit system\"",
        "sudo systemctl restart nginx",
        "service nginx reload",
        "ssh pi reboot",
        "cp config.example config 2>/dev/null",
        "echo 42 > answer.txt",
        "lsof -ti:3000 | xargs kill -9",
        "find . -name '*.pyc' -delete",
        "find build -name '*.o' -exec rm {} \\;",
        "sudo -u www rm -rf cache",
        "systemctl --user restart syncthing",
        "npm --prefix web install left-pad",
        "python3 -m pip install httpx",
        "sh -c 'rm -rf build'",
        "timeout 5 rm stale.lock",
        "(cd web && rm -rf dist)",
        "/bin/rm notes.bak",
        "scp app.conf router:/etc/app.conf",
        "ssh root@router <<'EOF'\n/etc/init.d/gl-cloud stop\nEOF",
        'gh issue create --title "Genesis quorum" --body-file "$SCRATCH/quorum.md"',
        "gh -R owner/repo issue comment 12 --body 'fixed'",
        "chmod +x scripts/deploy.sh",
        "gh release create v0.1.0 --notes 'first'",
        # a variable the command set again names a kept folder
        'TMPDIR=.; rm -rf "$TMPDIR/build"',
        "export TMPDIR=.\nrm -rf $TMPDIR/api",
        # a download saved into a file kept, its options however written, over lines too
        "curl -sL 'https://host/ext.crx' -o /Users/me/Desktop/ext.crx 2>&1 | head -5",
        "curl 'https://cdn/video' \\\n  -H 'Referer: https://site/' \\\n  -o ~/Desktop/video.mp4",
        "curl -LO https://host/release.tar.gz",
        "curl -so page.html https://host/",
        "curl --output=data.json https://host/api",
        "wget https://host/archive.zip",
    ],
)
def test_a_command_that_changes_a_kept_file_a_package_or_a_process(command: str) -> None:
    assert changes_something(command)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la ~/Library/LaunchAgents/",
        "cat ~/.config/app/config.json 2>/dev/null",
        "grep -rn TODO src > /dev/null && echo found",
        "pytest -q tests 2>&1 | tail -5",
        "npm test",
        "npm run build",
        "git add . && git commit -m 'fix: the login form'",
        "git push origin main",
        "mkdir -p /tmp/scratch && cp report.pdf /tmp/scratch/",
        "ls | tee /tmp/listing.txt",
        'python3 -c "print(1 > 0)"',
        "make check 2> errors.log",
        "echo done >&2",
        "cat README.md # > copy.md",
        # a heredoc's body is text handed to a program, not commands the shell runs
        "python3 - <<'EOF'\nimport os\nos.system('ls')\nrm = 1\nEOF",
        "echo \"it's unbalanced",
        "ssh router",  # a shell on the other machine: what it ran is not in the log
        'ssh -o ConnectTimeout=5 root@router "uname -a; uci show dhcp"',
        "systemctl status nginx",
        "service --status-all",
        "crontab -l",
        # a quoted string that runs over lines is one word, whatever it holds
        'python3 -c "\nimport sys\nif len(sys.argv) > 1:\n    print(1)\n"',
        'git commit -m "Refactor\n\ninstall step moved to CI"',
        'gh pr create --body "Summary\n> quoted note"',
        "gh issue view 288 --json title,body",
        "gh release list",
        "mkdir -p /tmp/x 2>/dev/null",
        "cp report.pdf /tmp/out 2>&1",
        "uv pip list",
        "brew services list",
        "unzip -l release.zip",
        "kill -0 1234",
        "perl -MFile::Find -e 'print 1'",
        "ls # a note; rm x",
        # Windows' temporary folder, where Claude Code keeps a session's scratchpad, named
        # directly or through a variable the command set
        'SCRATCH="C:/Users/me/AppData/Local/Temp/claude/C--Users-me/1277/scratchpad"\n'
        'mkdir -p "$SCRATCH/findings"',
        "cat > C:\\Users\\me\\AppData\\Local\\Temp\\issue.md <<'EOF'\nbody\nEOF",
        'echo "$BODY" > "$TMPDIR/pr.md"',
        'export D=/tmp/review; mkdir -p "$D/out"',
        "chmod +x /tmp/review/run.sh",  # the mode is no path
        "gh -R owner/repo issue view 12",
        # a download shown, checked or piped on: nothing kept
        "curl -s https://host/api/status",
        'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8001/',
        "curl -H 'X-o: y' https://host/",
        "curl -o /tmp/page.html https://host/",
        "wget -qO- https://host/install.sh | head",
        "wget --spider https://host/",
    ],
)
def test_a_command_that_only_reads_runs_or_uses_scratch_space(command: str) -> None:
    assert not changes_something(command)


def test_hostile_commands_are_read_in_time_and_without_a_crash() -> None:
    # an unclosed quote before many escaped ones, and ssh within ssh past any depth read
    assert changes_something("rm " + '"\\\\' * 50_000)
    assert not changes_something("ssh h " * 500 + "ls")
    # a word of many long variables is not expanded past a path's length
    long = "A=" + "x" * 50_000 + "\necho " + "$A" * 25_000 + " > /tmp/out"
    assert not changes_something(long)


@pytest.mark.parametrize(
    ("command", "only_git"),
    [
        ("git status", True),
        ("cd ~/shop && git add -A && git push origin main", True),
        ("git -C /srv/shop --no-pager log --oneline | head -5", True),
        ("sudo git pull --rebase", True),
        ("git tag v0.1.0 && git push --tags", False),  # a release made: work of its own
        ("git merge feature/refunds", False),
        ("git diff && npm test", False),
        ("grep -rn TODO src", False),
        ("", False),
    ],
)
def test_git_that_only_shows_or_ships_the_work(command: str, only_git: bool) -> None:
    assert only_version_control(command) is only_git
