"""Schemathesis fuzzing of a live `obsctl serve` against its own /openapi.json.

Every operation gets a bounded number of generated requests (valid and invalid); every
response must be a non-5xx that matches its documented status codes, content type and
schema. The run is seeded so a failure reproduces.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import start_server

MAX_EXAMPLES = os.environ.get("OBSCTL_FUZZ_EXAMPLES", "20")
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "unsupported_method",
])


def failure_report(output: str) -> str:
    """The FAILURES section of schemathesis' output, with long request bodies shortened."""
    start = output.find("FAILURES")
    section = output[start:] if start >= 0 else output
    return re.sub(r"-d '(.{200}).*?' (http)", r"-d '\1...' \2", section, flags=re.DOTALL)[:15000]


def seed_demo(db_path: Path | str, tmp_path: Path) -> None:
    """Load the bundled demo sample so responses with real data are checked too."""
    root = Path(__file__).resolve().parent.parent.parent
    events = tmp_path / "demo.jsonl"
    with open(events, "w") as out:
        subprocess.run([sys.executable, str(root / "examples" / "generate_demo.py"), "--now"],
                       stdout=out, check=True)
    subprocess.run([sys.executable, "-m", "obsctl", "--db", str(db_path), "ingest", "-q", str(events)],
                   check=True)


def test_api_conforms_to_its_openapi_document(tmp_path, db_url):
    seed_demo(db_url, tmp_path)
    # With a key set, the documented security is real: requests without it must get 401.
    server = start_server(db_url, tmp_path,
                          {"OBSCTL_RATE_LIMITS": "off", "SERVICE_API_KEY": "fuzz-key"}, threads=4)
    st = Path(sys.executable).with_name("st")
    try:
        result = subprocess.run(
            [str(st), "run", f"{server.url}/openapi.json", "--checks", CHECKS, "-H", "X-API-Key: fuzz-key",
             "--max-examples", MAX_EXAMPLES, "--seed", "20261122", "--workers", "1",  # hypothesis is not thread-safe inside schemathesis
             "--phases", "examples,coverage,fuzzing", "--request-timeout", "30",
             "--suppress-health-check", "all", "--no-color",
             # An event stream never ends by itself (tests/obsctl/sessions/test_follow.py reads it).
             "--exclude-path", "/events/stream"],
            capture_output=True, text=True, timeout=900,
        )
    finally:
        server.stop()
    assert result.returncode == 0, (failure_report(result.stdout + result.stderr)
                                    + "\n--- server log ---\n" + server.log()[-5000:])
    assert "Traceback" not in server.log(), server.log()[-4000:]
