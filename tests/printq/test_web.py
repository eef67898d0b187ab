"""printq.web: the HTTP API through Flask's test client, over real files in a temp dir."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from printq.dataset import Dataset
from printq.settings import BUNDLED_DATA, Settings
from printq.web import create_app

DATA = Path(__file__).parent.parent / "data"
ALL_METRICS = ["serial", "livePercent", "deadPercent", "elasticity", "cl_duration", "cl_intensity",
               "extruder1", "extruder2", "layerHeight", "layerNum", "wellplate"]


@pytest.fixture
def data_file(tmp_path) -> Path:
    path = tmp_path / "prints.json"
    shutil.copy(DATA / "printq-small.json", path)
    return path


def make_client(path, tmp_path):
    return create_app(Settings(str(path), str(tmp_path / "cache"))).test_client()


@pytest.fixture
def client(data_file, tmp_path):
    return make_client(data_file, tmp_path)


def rewrite(path: Path, content: str) -> None:
    path.write_text(content)
    st = path.stat()  # a later mtime even on filesystems with coarse timestamps
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_known_answer_on_the_bundled_dataset(tmp_path):
    response = make_client(BUNDLED_DATA, tmp_path).get("/api/prints/livePercent/greater/50")
    assert response.status_code == 200
    assert response.data == b"6861"
    assert response.mimetype == "application/json"


@pytest.mark.parametrize("path, body", [
    ("/api/prints/livePercent/greater/20", b"2"),
    ("/api/prints/livePercent/lesser/50", b"1"),
    ("/api/prints/livePercent/equal/50.0000000001", b"1"),
    ("/api/prints/serial/equal/4", b"1"),
    ("/api/prints/serial/greater/-3", b"4"),
    ("/api/prints/serial/greater/Maximum", b"4"),
    ("/api/prints/serial/lesser/Minimum", b"1"),
    ("/api/prints/serial/equal/Average", b"2.5"),
    ("/api/prints/wellplate/greater/Average", b"38.0"),
    ("/api/prints/livePercent/greater/Maximum", b"75.25"),
    ("/api/prints/extruder2/greater/Minimum", b"40.0"),
    ("/api/prints/layerNum/greater/19.5", b"2"),
    ("/api/prints/cl_duration/greater/1e3", b"2"),
])
def test_answers_are_bare_json_numbers(client, path, body):
    response = client.get(path)
    assert (response.status_code, response.data) == (200, body)
    assert json.loads(response.data) == json.loads(body)


def test_names_are_case_insensitive(client):
    assert client.get("/api/prints/LIVEPERCENT/GREATER/20").data == b"2"
    assert client.get("/api/prints/livepercent/x/maximum").data == b"75.25"


def test_aggregate_ignores_the_comparison_segment(client):
    response = client.get("/api/prints/serial/bogus/Maximum")
    assert (response.status_code, response.data) == (200, b"4")


def test_unknown_metric_is_400_naming_it_and_listing_all_metrics(client):
    response = client.get("/api/prints/viability/greater/5")
    assert response.status_code == 400
    message = response.get_json()["Message"]
    assert "'viability'" in message
    assert all(name in message for name in ALL_METRICS)
    assert list(response.get_json()) == ["Message"]


@pytest.mark.parametrize("path, fragment", [
    ("/api/prints/serial/above/5", "Unknown comparison 'above'"),
    ("/api/prints/livePercent/greater/NaN", "neither a finite number"),
    ("/api/prints/livePercent/greater/Infinity", "neither a finite number"),
    ("/api/prints/livePercent/greater/abc", "neither a finite number"),
])
def test_bad_comparison_or_value_is_400(client, path, fragment):
    response = client.get(path)
    assert response.status_code == 400
    assert fragment in response.get_json()["Message"]


def test_metric_with_no_valid_records_is_404(tmp_path):
    path = tmp_path / "nulls.json"
    path.write_text(json.dumps([{"print_data": {"livePercent": None, "deadPercent": 4.5}}] * 3))
    client = make_client(path, tmp_path)
    for value in ("50", "Maximum", "Average"):
        response = client.get(f"/api/prints/livePercent/greater/{value}")
        assert response.status_code == 404
        assert "No valid livePercent values" in response.get_json()["Message"]
    assert client.get("/api/prints/deadPercent/greater/1").data == b"3"


def test_the_dirty_file_answers_from_its_one_clean_record(tmp_path):
    client = make_client(DATA / "printq-dirty.json", tmp_path)
    assert client.get("/api/prints/livePercent/greater/30").data == b"1"
    assert client.get("/api/prints/livePercent/x/Average").data == b"37.87"
    assert client.get("/api/prints/extruder1/x/Maximum").data == b"38.0"
    assert client.get("/api/prints/wellplate/x/Maximum").data == b"1"


@pytest.mark.parametrize("path", ["/", "/api/prints", "/api/prints/serial", "/api/prints/serial/greater",
                                  "/api/prints/serial/greater/1/extra", "/nope"])
def test_unknown_routes_are_404_json(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.mimetype == "application/json"
    assert "/api/prints/{metric}/{comparison}/{value}" in response.get_json()["Message"]


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
def test_other_methods_are_405_json(client, method):
    response = getattr(client, method)("/api/prints/serial/greater/1")
    assert response.status_code == 405
    assert "read-only" in response.get_json()["Message"]
    assert "GET" in response.headers["Allow"]


def test_a_crash_is_500_json_without_a_traceback(tmp_path):
    class Exploding(Dataset):
        def snapshot(self):
            raise RuntimeError("secret internals")

    app = create_app(Settings(), dataset=Exploding(tmp_path / "x.json"))
    response = app.test_client().get("/api/prints/serial/greater/1")
    assert response.status_code == 500
    assert response.get_json() == {"Message": "Internal server error."}


def test_no_good_load_yet_is_503_then_recovers(tmp_path):
    path = tmp_path / "later.json"
    client = make_client(path, tmp_path)
    response = client.get("/api/prints/serial/greater/1")
    assert response.status_code == 503
    assert str(path) in response.get_json()["Message"]
    assert client.get("/health").status_code == 503
    path.write_text(json.dumps([{"user_info": {"serial": 5}}]))
    assert client.get("/api/prints/serial/greater/1").data == b"1"


def test_invalid_query_is_400_even_when_data_is_unavailable(tmp_path):
    response = make_client(tmp_path / "missing.json", tmp_path).get("/api/prints/bogus/greater/1")
    assert response.status_code == 400


def test_reloads_when_the_file_changes(client, data_file):
    assert client.get("/api/prints/serial/greater/0").data == b"4"
    rewrite(data_file, json.dumps([{"user_info": {"serial": 1}}]))
    assert client.get("/api/prints/serial/greater/0").data == b"1"


def test_broken_rewrite_keeps_answering_from_the_last_good_load(client, data_file, caplog):
    assert client.get("/api/prints/serial/greater/0").data == b"4"
    rewrite(data_file, '[{"user_info": ')
    response = client.get("/api/prints/serial/greater/0")
    assert (response.status_code, response.data) == (200, b"4")
    assert "not valid JSON" in caplog.text and str(data_file) in caplog.text
    health = client.get("/health").get_json()
    assert health["status"] == "ok" and "not valid JSON" in health["last_error"]


def test_health_reports_what_is_loaded(client, data_file):
    response = client.get("/health")
    body = response.get_json()
    assert response.status_code == 200
    assert body["status"] == "ok" and body["records"] == 4 and body["data"] == str(data_file)
    assert body["last_error"] is None and body["loaded_at"].endswith("Z")


def test_concurrent_requests_across_a_reload_all_succeed(client, data_file, tmp_path):
    def get(_):
        response = client.get("/api/prints/serial/greater/0")
        return response.status_code, response.data

    with ThreadPoolExecutor(max_workers=8) as pool:
        before = pool.map(get, range(50))
        replacement = tmp_path / "replacement.json"
        replacement.write_text(json.dumps([{"user_info": {"serial": 1}}] * 2))
        os.replace(replacement, data_file)
        after = list(pool.map(get, range(50)))
    assert set(before) <= {(200, b"4"), (200, b"2")}
    assert set(after) == {(200, b"2")}


def test_each_app_has_its_own_dataset(tmp_path, data_file):
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"user_info": {"serial": 1}}]))
    first, second = make_client(data_file, tmp_path), make_client(other, tmp_path)
    assert first.get("/api/prints/serial/greater/0").data == b"4"
    assert second.get("/api/prints/serial/greater/0").data == b"1"
