"""Shared fixtures: the committed ONNX models, run by onnxruntime, and WordNet from Debian."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from covr.models import (
    EXCLUSIVITY_FILE,
    PRESENCE_FILE,
    bundled_model_path,
    open_configured_wordnet,
)
from covr.models.exclusivity import OnnxExclusivity
from covr.models.presence import PresenceModel
from covr.settings import Settings


@pytest.fixture(scope="session")
def model_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=tmp_path_factory.mktemp("models-data"))


@pytest.fixture(scope="session")
def wordnet(model_settings: Settings) -> Any:
    return open_configured_wordnet(model_settings.models)


@pytest.fixture(scope="session")
def exclusivity_path() -> Path:
    return bundled_model_path(EXCLUSIVITY_FILE)


@pytest.fixture(scope="session")
def presence_path() -> Path:
    return bundled_model_path(PRESENCE_FILE)


@pytest.fixture(scope="session")
def exclusivity(exclusivity_path: Path, wordnet: Any) -> OnnxExclusivity:
    return OnnxExclusivity(exclusivity_path, wordnet=wordnet)


@pytest.fixture(scope="session")
def presence(presence_path: Path) -> PresenceModel:
    return PresenceModel(presence_path)
