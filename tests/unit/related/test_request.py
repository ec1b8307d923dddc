"""The one contract of a lookup (covr.related.request): checked when built, equal and hashed by
its subgraph's key and fields (it is the result cache's key), defaults resolved from settings,
and the fields a page token is bound to."""

from __future__ import annotations

import pytest

from covr.related.api import DEFAULT
from covr.related.errors import RelatedError
from covr.related.request import RelatedRequest
from covr.scene.subgraph import Subgraph
from covr.settings import Settings

pytestmark = pytest.mark.unit

KEY = "man[tall]-(wearing)->hat[red]"


def test_a_key_is_parsed_and_equal_requests_hash_alike() -> None:
    by_key = RelatedRequest(KEY, split="val", per_signature=3, seed=2)
    by_graph = RelatedRequest(Subgraph.from_key(KEY), split="val", per_signature=3, seed=2)
    assert isinstance(by_key.g, Subgraph)
    assert by_key.key == KEY
    assert by_key == by_graph
    assert hash(by_key) == hash(by_graph)
    assert len({by_key, by_graph, by_key.at(5)}) == 2
    assert by_key.about("man") != by_key


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"max_distance": 3}, "max_distance"),
        ({"max_distance": True}, "max_distance"),
        ({"per_signature": 0}, "per_signature"),
        ({"limit": -1}, "limit"),
        ({"positives_limit": 1.5}, "positives_limit"),
        ({"offset": -1}, "offset"),
        ({"seed": "1"}, "seed"),
        ({"split": ""}, "split"),
    ],
)
def test_a_bad_argument_is_named(options: dict[str, object], field: str) -> None:
    with pytest.raises(RelatedError) as err:
        RelatedRequest(KEY, **options)  # type: ignore[arg-type]
    assert err.value.field == field


def test_a_request_without_a_subgraph_is_refused_where_one_is_needed() -> None:
    with pytest.raises(RelatedError) as err:
        _ = RelatedRequest().subgraph
    assert err.value.field == "g"


def test_defaults_resolve_from_the_settings() -> None:
    settings = Settings(_env_file=None, related_per_signature=4, related_positives=7)  # type: ignore[call-arg]
    request = RelatedRequest(KEY)
    assert request.per_signature is DEFAULT
    with pytest.raises(RelatedError):
        _ = request.per_signature_cap
    resolved = request.resolved(settings.related)
    assert (resolved.per_signature_cap, resolved.positives_cap) == (4, 7)
    assert resolved == RelatedRequest(KEY, per_signature=4, positives_limit=7)
    assert resolved.resolved(settings.related) is resolved


def test_a_page_token_binds_everything_but_the_page() -> None:
    request = RelatedRequest(KEY, split="val", per_signature=3, positives_limit=2, limit=9)
    bound = request.binding()
    assert bound["key"] == KEY
    assert "offset" not in bound
    assert "limit" not in bound
    assert request.at(10).binding() == bound
    assert RelatedRequest(KEY, split="val", per_signature=3, positives_limit=2).binding() == bound
    assert RelatedRequest(KEY, split="val", per_signature=4, positives_limit=2).binding() != bound
