"""The metrics listing: names from the data file print as typed, TSV rows stay one line."""

from printq.render import COLUMNS, metrics_table, metrics_tsv

ROW = {"metric": "live[/x]", "group": "[bold]g[/bold]", "type": "number", "unit": None, "count": 2,
       "minimum": 1.0, "maximum": 3.0, "average": 2.0}


def test_terminal_table_prints_markup_like_names_and_path_as_typed(capsys):
    metrics_table([ROW], "/data/[/x].json")
    out = capsys.readouterr().out
    assert "live[/x]" in out and "[bold]g[/bold]" in out and "data: /data/[/x].json" in out


def test_tsv_escapes_tabs_and_line_breaks_in_names():
    lines = metrics_tsv([{**ROW, "metric": "a\tb\nc\\d"}]).splitlines()
    assert len(lines) == 2
    cells = lines[1].split("\t")
    assert len(cells) == len(COLUMNS)
    assert cells[0] == "a\\tb\\nc\\\\d" and cells[3] == "-"
