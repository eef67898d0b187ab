"""Fixtures of the webhook tests: settings that let webhooks reach 127.0.0.1, and a real
HTTP receiver there."""

from __future__ import annotations

import pytest

from obsctl.config import Settings
from tests.webhook_receiver import Receiver


@pytest.fixture
def private_ok(db_url) -> Settings:
    return Settings.from_env({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}, db_path=db_url)


@pytest.fixture
def receiver():
    r = Receiver().start()
    yield r
    r.stop()
