"""printq's command line: in-process through ``main()``, plus a few runs of the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from printq import __version__
from printq.cli import main, parse_fast_query
from printq.dataset import load_snapshot
from printq.queries import describe_metrics

DATA = Path(__file__).parent.parent / "data"
SMALL = str(DATA / "printq-small.json")
PRINTQ = Path(sys.executable).with_name("printq")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("PRINTQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRINTQ_DATA", raising=False)


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_known_answer_on_the_bundled_dataset(capsys):
    assert run(capsys, "livePercent", "greater", "50") == (0, "6861\n", "")


@pytest.mark.parametrize("args, out", [
    (("serial", "greater", "Maximum"), "4\n"),
    (("serial", "x", "Average"), "2.5\n"),
    (("LIVEPERCENT", "GREATER", "20"), "2\n"),
    (("serial", "greater", "-3"), "4\n"),  # a negative value is not an option
    (("layerNum", "equal", "19.5"), "0\n"),
])
def test_queries_print_the_bare_json_number(capsys, args, out):
    assert run(capsys, *args, "--data", SMALL) == (0, out, "")


def test_data_option_may_come_first_or_use_equals(capsys):
    assert run(capsys, "--data", SMALL, "serial", "greater", "0")[1] == "4\n"
    assert run(capsys, f"--data={SMALL}", "serial", "greater", "0")[1] == "4\n"


def test_data_option_beats_env_which_beats_bundled(capsys, monkeypatch, tmp_path):
    other = tmp_path / "one.json"
    other.write_text(json.dumps([{"user_info": {"serial": 1}}]))
    monkeypatch.setenv("PRINTQ_DATA", str(other))
    assert run(capsys, "serial", "greater", "0")[1] == "1\n"
    assert run(capsys, "serial", "greater", "0", "--data", SMALL)[1] == "4\n"
    monkeypatch.delenv("PRINTQ_DATA")
    assert run(capsys, "serial", "greater", "-1")[1] == "10000\n"


def test_invalid_query_exits_1_with_a_one_line_message_on_stderr(capsys):
    code, out, err = run(capsys, "viability", "greater", "5", "--data", SMALL)
    assert (code, out) == (1, "")
    assert err.startswith("Error: Unknown metric 'viability'. Valid metrics: serial, livePercent")
    assert err.count("\n") == 1


def test_nan_value_exits_1(capsys):
    code, _, err = run(capsys, "livePercent", "greater", "NaN", "--data", SMALL)
    assert code == 1 and "neither a finite number" in err


def test_no_valid_records_exits_1(capsys, tmp_path):
    path = tmp_path / "nulls.json"
    path.write_text(json.dumps([{"print_data": {"livePercent": None}}]))
    code, out, err = run(capsys, "livePercent", "greater", "Average", "--data", str(path))
    assert (code, out) == (1, "")
    assert "No valid livePercent values" in err


@pytest.mark.parametrize("content", [None, "{broken", '{"not": "an array"}'])
def test_unreadable_or_unparseable_data_exits_2_naming_the_file(capsys, tmp_path, content):
    path = tmp_path / "data.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "livePercent", "greater", "50", "--data", str(path))
    assert (code, out) == (2, "")
    assert str(path) in err and err.startswith("Error: ") and err.count("\n") == 1


def test_version(capsys):
    assert run(capsys, "--version") == (0, f"printq {__version__}\n", "")


def test_root_help_documents_the_query_form_with_an_example(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "METRIC COMPARISON VALUE" in out and "printq livePercent greater 50" in out
    assert all(command in out for command in ("query", "metrics", "serve"))


@pytest.mark.parametrize("command", ["query", "metrics", "serve"])
def test_every_command_has_help_with_an_example(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert "Example" in out and f"printq {command}" in out


def test_help_after_a_bare_query_shows_the_query_help(capsys):
    code, out, _ = run(capsys, "livePercent", "greater", "--help")
    assert code == 0 and "printq query" in out


def test_a_missing_argument_is_a_usage_error_exit_2(capsys):
    code, _, err = run(capsys, "livePercent", "greater")
    assert code == 2 and "Missing argument" in err


def test_query_subcommand_is_the_same_query(capsys):
    assert run(capsys, "query", "serial", "greater", "-3", "--data", SMALL)[:2] == (0, "4\n")
    assert run(capsys, "query", "bogus", "greater", "1", "--data", SMALL)[0] == 1


def test_fast_path_parsing_leaves_options_and_subcommands_to_typer():
    assert parse_fast_query(["a", "b", "c"]) == ("a", "b", "c", None)
    assert parse_fast_query(["a", "b", "-2.5", "--data", "f"]) == ("a", "b", "-2.5", "f")
    assert parse_fast_query(["--", "a", "b", "-x"]) == ("a", "b", "-x", None)
    assert parse_fast_query(["a", "b", "c", "--help"]) is None
    assert parse_fast_query(["metrics", "--json", "x"]) is None
    assert parse_fast_query(["serve", "a", "b"]) is None
    assert parse_fast_query(["a", "b"]) is None


def test_metrics_json_is_the_describe_metrics_rows(capsys):
    code, out, _ = run(capsys, "metrics", "--json", "--data", SMALL)
    assert code == 0
    rows = json.loads(out)
    assert rows == describe_metrics(load_snapshot(SMALL))
    serial = rows[0]
    assert serial == {"metric": "serial", "group": "metadata", "type": "int", "unit": "", "count": 4,
                      "minimum": 1, "maximum": 4, "average": 2.5}
    assert [row["metric"] for row in rows][:3] == ["serial", "livePercent", "deadPercent"]


def test_metrics_piped_is_tab_separated_with_a_header(capsys):
    code, out, _ = run(capsys, "metrics", "--data", SMALL)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 12
    assert lines[0].split("\t") == ["metric", "group", "type", "unit", "count", "minimum", "maximum",
                                    "average"]
    assert lines[2].split("\t") == ["livePercent", "print data", "double", "%", "3", "10.0", "75.25",
                                    "45.083333333333336"]


def test_metrics_with_a_broken_file_exits_2(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("nope")
    code, out, err = run(capsys, "metrics", "--data", str(path))
    assert (code, out) == (2, "") and str(path) in err


def test_serve_get_answers_one_request_in_process(capsys):
    assert run(capsys, "serve", "--data", SMALL, "--get", "/api/prints/serial/greater/0")[:2] == (0, "4\n")
    code, out, _ = run(capsys, "serve", "--data", SMALL, "--get", "/api/prints/bogus/greater/0")
    assert code == 1 and json.loads(out)["Message"].startswith("Unknown metric")


def test_serve_passes_options_to_the_server(capsys, monkeypatch):
    calls = []
    monkeypatch.setattr("printq.server.serve",
                        lambda app, settings, records: calls.append((settings, records)))
    monkeypatch.setenv("PORT", "9123")
    assert run(capsys, "serve", "--data", SMALL, "--threads", "2")[0] == 0
    settings, records = calls[0]
    assert (settings.host, settings.port, settings.threads) == ("127.0.0.1", 9123, 2)
    assert settings.data_path == SMALL
    assert records == 4
    run(capsys, "serve", "--data", SMALL, "--port", "9000", "--host", "0.0.0.0")
    assert (calls[1][0].host, calls[1][0].port) == ("0.0.0.0", 9000)


def env_for_subprocess(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PRINTQ_DATA"}
    env["PRINTQ_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def test_console_script_exit_codes_0_1_2(tmp_path):
    env = env_for_subprocess(tmp_path)

    def script(*args):
        return subprocess.run([str(PRINTQ), *args], check=False, capture_output=True, text=True, env=env,
                              timeout=60)

    ok = script("livePercent", "greater", "50")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "6861\n", "")
    bad = script("bogus", "greater", "50")
    assert (bad.returncode, bad.stdout) == (1, "") and "Unknown metric 'bogus'" in bad.stderr
    missing = script("livePercent", "greater", "50", "--data", str(tmp_path / "missing.json"))
    assert missing.returncode == 2 and "missing.json" in missing.stderr
    assert "Traceback" not in bad.stderr + missing.stderr


def test_python_dash_m_printq(tmp_path):
    result = subprocess.run([sys.executable, "-m", "printq", "serial", "greater", "Maximum"],
                            check=False, capture_output=True, text=True, env=env_for_subprocess(tmp_path),
                            timeout=60)
    assert (result.returncode, result.stdout) == (0, "99\n")


def test_the_query_path_imports_neither_typer_flask_nor_rich(tmp_path):
    code = (
        "import sys; from printq.cli import main; rc = main(['livePercent', 'greater', '50']);"
        "print(sorted(m for m in ('typer', 'click', 'flask', 'rich', 'werkzeug') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                            env=env_for_subprocess(tmp_path), timeout=60)
    assert result.stdout.splitlines() == ["6861", "[]"]



def test_serve_on_a_port_in_use_exits_1_with_a_message(capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run(capsys, "serve", "--data", SMALL, "--port", str(port))
    assert code == 1
    assert f"Error: Cannot listen on 127.0.0.1:{port}" in err and "Traceback" not in err


@pytest.mark.parametrize("query", [
    "livePercent/greater/20", "serial/x/Average", "wellplate/any/maximum", "layerNum/equal/19.5",
    "viability/greater/1", "livePercent/above/1", "livePercent/greater/NaN",
])
def test_cli_and_http_give_the_same_answer_and_message(capsys, query):
    from printq.settings import Settings
    from printq.web import create_app

    response = create_app(Settings(SMALL)).test_client().get(f"/api/prints/{query}")
    code, out, err = run(capsys, *query.split("/"), "--data", SMALL)
    if response.status_code == 200:
        assert (code, out) == (0, response.get_data(as_text=True) + "\n")
    else:
        assert (code, out) == (1, "")
        assert err == f"Error: {response.get_json()['Message']}\n"


@pytest.mark.parametrize("args, word, closest", [
    (["metircs"], "metircs", "metrics"),
    (["metrcs", "--json"], "metrcs", "metrics"),
    (["serv", "--port", "8080"], "serv", "serve"),
    (["quer", "livePercent"], "quer", "query"),
])
def test_a_mistyped_command_suggests_the_closest_one(capsys, args, word, closest):
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert err == (f"Error: No such command '{word}'. Did you mean '{closest}'? "
                   "A query is three words: METRIC COMPARISON VALUE.\n")


def test_a_metric_alone_is_still_a_query_missing_its_other_words(capsys):
    code, _, err = run(capsys, "serial")
    assert code == 2 and "No such command" not in err and "Missing argument 'COMPARISON'" in err


def test_a_mistyped_metric_in_a_full_query_suggests_the_metric(capsys):
    code, _, err = run(capsys, "livePercnt", "greater", "50", "--data", SMALL)
    assert code == 1
    assert err.startswith("Error: Unknown metric 'livePercnt'. Did you mean 'livePercent'? Valid metrics:")
