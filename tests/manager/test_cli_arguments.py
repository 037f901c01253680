"""Example tests for recuris.manager.cli_arguments: the command line's grammar (VA1-VA8)."""

import argparse

import pytest

from recuris.manager.cli_arguments import (
    ENVIRONMENT_DATABASE,
    file_to_write,
    moment,
    parse,
    parser,
    seconds,
)
from recuris.retrieval.scoring import STOP_WORDS
from recuris.storage.item import MAX_TIME


def every_action():
    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    yield from (("python -m recuris", action) for action in parser()._actions)
    for name, sub in commands.choices.items():
        yield from ((name, action) for action in sub._actions)


def test_every_option_and_argument_has_help_text():
    """VA3: no option or argument of any command is left without help text."""
    missing = [
        (command, action.dest)
        for command, action in every_action()
        if not action.help or action.help == argparse.SUPPRESS
    ]
    assert missing == []


def test_db_and_timeout_are_read_before_or_after_the_command():
    """VA1: `--db F --timeout T stats` and `stats --db F --timeout T` parse alike."""
    before = parse(["--db", "m.db", "--timeout", "2", "stats"], {})
    after = parse(["stats", "--db", "m.db", "--timeout", "2"], {})
    assert (before.db, before.timeout) == (after.db, after.timeout) == ("m.db", 2.0)


def test_the_environment_names_the_database_and_the_option_wins():
    """VA1: RECURIS_DB names the database when --db is absent; --db wins over it."""
    environ = {ENVIRONMENT_DATABASE: "from-environment.db"}
    assert parse(["stats"], environ).db == "from-environment.db"
    assert parse(["stats", "--db", "given.db"], environ).db == "given.db"


@pytest.mark.parametrize(
    "argv",
    [
        ["stats"],
        ["search", "x", "--user", "ana", "--top-k", "0", "--db", "m.db"],
        ["search", "x", "--user", "ana", "--at", "yesterday", "--db", "m.db"],
        ["stats", "--timeout", "nan", "--db", "m.db"],
    ],
    ids=["no-database", "top-k-0", "at-word", "timeout-nan"],
)
def test_a_bad_command_line_exits_2(argv, capsys):
    """VA2: no database, a --top-k below 1, an --at that is not a time or a bad timeout exit 2."""
    with pytest.raises(SystemExit) as exit:
        parse(argv, {})
    assert exit.value.code == 2 and "error:" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["-1", "inf", "soon"])
def test_a_timeout_is_a_finite_number_of_seconds_not_below_0(text):
    """VA2: `seconds` refuses a negative, infinite or non-numeric value as a usage error."""
    with pytest.raises(argparse.ArgumentTypeError):
        seconds(text)


def test_a_moment_is_the_same_however_it_is_written():
    """VA4: epoch seconds, ISO 8601 in UTC ("Z") and with an offset name one moment."""
    written = ["1000", "1970-01-01T00:16:40Z", "1970-01-01T01:16:40+01:00", "1970-01-01T00:16:40"]
    assert {moment(text) for text in written} == {1000.0}


def test_every_command_takes_json():
    """VA5: --json is an option of every command, the writing ones too."""
    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    lacking = [
        name
        for name, sub in commands.choices.items()
        if "--json" not in {option for action in sub._actions for option in action.option_strings}
    ]
    assert lacking == []


def test_import_reads_its_own_options_and_refuses_a_cap_below_1(capsys):
    """VA2, V13, V14: import takes --restore-forgotten and --max-line-bytes of at least 1."""
    arguments = parse(
        ["import", "-", "--restore-forgotten", "--max-line-bytes", "10"], {"RECURIS_DB": "m.db"}
    )
    assert (arguments.restore_forgotten, arguments.max_line_bytes) == (True, 10)
    with pytest.raises(SystemExit) as exit:
        parse(["import", "-", "--max-line-bytes", "0"], {"RECURIS_DB": "m.db"})
    assert exit.value.code == 2 and "--max-line-bytes" in capsys.readouterr().err


def refused(argv: list[str], capsys) -> str:
    """Parse argv, which must be refused as a usage error; return the error line."""
    with pytest.raises(SystemExit) as exit:
        parse(argv, {})
    [line] = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert exit.value.code == 2
    return line


@pytest.mark.parametrize("command", [["stats"], ["list", "--user", "ana"], ["import", "-"]])
def test_a_database_that_is_a_folder_is_a_usage_error(tmp_path, capsys, command):
    """VA6: `--db` naming a folder exits 2, saying it is a folder, for reading and writing alike."""
    line = refused([*command, "--db", str(tmp_path)], capsys)
    assert f"VA6: --db {tmp_path} is a folder" in line


def test_an_import_into_a_folder_that_does_not_exist_is_a_usage_error(tmp_path, capsys):
    """VA6: `import` exits 2 when the database it would create has no folder to be created in."""
    line = refused(["import", "-", "--db", str(tmp_path / "missing" / "x.db")], capsys)
    assert "VA6:" in line and "there is no folder" in line


@pytest.mark.parametrize("name, said", [("missing.jsonl", "no such file"), (".", "a folder")])
def test_an_import_file_missing_or_a_folder_is_the_same_usage_error(tmp_path, capsys, name, said):
    """VA6: `import FILE` exits 2 alike for a FILE that does not exist and for a folder."""
    line = refused(["import", str(tmp_path / name), "--db", str(tmp_path / "m.db")], capsys)
    assert "VA6: import" in line and said in line


def test_a_file_to_write_must_be_in_a_folder_and_not_be_one(tmp_path):
    """VA6: `file_to_write` refuses a folder and a file in a folder that does not exist."""
    assert file_to_write(str(tmp_path / "plot.svg")) == str(tmp_path / "plot.svg")
    for bad in (tmp_path, tmp_path / "missing" / "plot.svg"):
        with pytest.raises(argparse.ArgumentTypeError, match="VA6"):
            file_to_write(str(bad))


def test_a_file_to_write_where_no_file_can_be_made_is_refused():
    """VA6: `file_to_write` refuses a file in a folder nothing can be written in (/proc: even
    root may make no file there), naming the file."""
    with pytest.raises(argparse.ArgumentTypeError, match="VA6: cannot write /proc/trace.html"):
        file_to_write("/proc/trace.html")


def test_checking_a_file_to_write_leaves_the_folder_and_an_existing_file_as_they_were(tmp_path):
    """VA6: the check writes nothing: a file that was not there is not left behind, and one
    that was keeps its bytes and its time."""
    kept = tmp_path / "kept.svg"
    kept.write_text("<svg/>")
    before = kept.stat().st_mtime_ns
    assert file_to_write(str(kept)) == str(kept)
    assert file_to_write(str(tmp_path / "new.svg")) == str(tmp_path / "new.svg")
    assert [path.name for path in tmp_path.iterdir()] == ["kept.svg"]
    assert (kept.read_text(), kept.stat().st_mtime_ns) == ("<svg/>", before)


@pytest.mark.parametrize("text", [f"{MAX_TIME * 10:.0f}", "99999999999999999"])
def test_a_search_time_outside_the_clocks_range_is_a_usage_error(text, capsys):
    """VA7: an `--at` beyond ±MAX_TIME, which no clock may read (I4), exits 2, naming the range."""
    line = refused(["search", "x", "--user", "ana", "--at", text, "--db", "m.db"], capsys)
    assert "VA7" in line and "outside the clock's range" in line


@pytest.mark.parametrize("query", ["", "  ", "?!"])
def test_a_search_query_without_a_word_is_a_usage_error(query, capsys):
    """VA7: a query in which the tokenizer finds no word exits 2, not 0 with "nothing found"."""
    line = refused(["search", query, "--user", "ana", "--db", "m.db"], capsys)
    assert "VA7" in line and "no word to search for" in line


@pytest.mark.parametrize("query", ["the of and", "What was it?", " ".join(sorted(STOP_WORDS))])
def test_a_search_query_of_stop_words_only_is_the_same_usage_error(query, capsys):
    """VA7: a query whose every word is one of the scorer's stop words (SR3) exits 2, as one
    with no word does: the scorer would find nothing for it."""
    line = refused(["search", query, "--user", "ana", "--db", "m.db"], capsys)
    assert "VA7" in line and "no word to search for" in line


def test_a_query_with_one_word_beside_stop_words_is_searched():
    """VA7: one word the scorer keeps is enough; the stop words around it refuse nothing."""
    assert parse(["search", "the of deploy", "--user", "ana", "--db", "m.db"], {}).query


USER_COMMANDS = [
    ["list", "--user"],
    ["search", "deploy", "--user"],
    ["history", "fact-1", "--user"],
    ["export", "--user"],
    ["forget-user"],
]


@pytest.mark.parametrize("user", ["", "  "])
@pytest.mark.parametrize("command", USER_COMMANDS, ids=lambda command: command[0])
def test_a_blank_user_is_a_usage_error_on_every_command(command, user, capsys):
    """VA8: a blank user exits 2 on every command that names one, naming the rule."""
    line = refused([*command, user, "--db", "m.db"], capsys)
    assert "VA8: a user must not be empty" in line
