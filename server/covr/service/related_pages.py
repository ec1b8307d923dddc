"""FindRelatedImages: request fields → lookup arguments, lookup results → page messages.

A request names a subgraph (pages continue with a page token bound to the lookup request,
:meth:`covr.related.request.RelatedRequest.binding`) or an image (one stream of pages per
subgraph of the image, up to ``max_subgraphs``). The request message becomes one
:class:`~covr.related.request.RelatedRequest`, checked and resolved once; the lookup
(:class:`covr.related.lookup.RelatedLookup`) does the work, and this module only pages: each page
is one lookup of that request at the page's offset, made inside the RPC's deadline scope, and
the stream stops between pages when the client has left or ``max_results`` distractors were sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any

from covr.related.api import DEFAULT
from covr.related.config import RelatedSettings
from covr.related.lookup import RelatedLookup, RelatedResult
from covr.related.request import RelatedRequest
from covr.scene.subgraph import Subgraph
from covr.service import convert
from covr.service.convert import RequestLimits
from covr.service.errors import FieldViolation, InvalidArgument
from covr.v1 import related_pb2

Scope = Callable[[], AbstractContextManager[None]]


@dataclass(frozen=True)
class RelatedQuery:
    """The validated request: the lookup request (bound to the subgraph, or to none for an
    image target) and what its pages show."""

    request: RelatedRequest
    image_id: str
    positives: bool
    plain: bool
    max_subgraphs: int
    max_results: int

    def bound(self, request: RelatedRequest) -> dict[str, Any]:
        """The fields a page token of ``request`` (this query's, about one subgraph) is only
        valid for."""
        return {"plain": self.plain, **request.binding()}


def parse(
    request: related_pb2.FindRelatedImagesRequest, limits: RequestLimits, related: RelatedSettings
) -> RelatedQuery:
    """The request's query; every bad field is reported (``INVALID_ARGUMENT``). The service's
    limits cap the sizes, the related room's section (``related``) fills the defaults."""
    target = request.WhichOneof("target")
    subgraph: Subgraph | None = None
    if target == "subgraph":
        subgraph = convert.subgraph_from_proto(request.subgraph)
    elif target == "image_id":
        convert.require_text(request.image_id, "image_id")
        if request.page_token:
            raise InvalidArgument.field(
                "page_token", "continue a page with its subgraph as the target, not the image"
            )
    else:
        raise InvalidArgument.field("target", "set subgraph or image_id")
    violations = convert.check_text(request.split, "split", required=False)
    if request.max_distance > 2:
        violations.append(FieldViolation("max_distance", "must be 0 (= 2), 1 or 2"))
    cap = limits.settings.service_max_page_size
    if request.per_signature_cap > cap:
        violations.append(FieldViolation("per_signature_cap", f"is larger than {cap}"))
    if violations:
        raise InvalidArgument(violations)
    asked = RelatedRequest(
        subgraph,
        split=request.split or None,
        max_distance=0 if request.exclude_distractors else (request.max_distance or 2),
        per_signature=request.per_signature_cap or DEFAULT,
        limit=limits.page_size(request.page_size),
        seed=request.seed,
        presence=not request.skip_presence_filter,
    ).resolved(related)
    query = RelatedQuery(
        request=asked,
        image_id=request.image_id,
        positives=not request.exclude_positives,
        plain=request.skip_exclusivity_model,
        max_subgraphs=limits.max_subgraphs(request.max_subgraphs),
        max_results=request.max_results,
    )
    if subgraph is None:
        return query
    state = convert.decode_page_token(request.page_token, query.bound(asked))
    offset = state.get("offset", 0)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidArgument.field("page_token", "is not a page token of this service")
    return replace(query, request=asked.at(offset))


def pages(
    lookup: RelatedLookup, query: RelatedQuery, *, scope: Scope, gone: threading.Event
) -> Iterator[related_pb2.FindRelatedImagesResponse]:
    """The response pages of ``query``: for each query subgraph, its first page and the pages
    after it until the last, ``max_results`` distractors, or the client left."""
    with scope():
        firsts = _first_pages(lookup, query)
    while not gone.is_set():
        with scope():
            result = next(firsts, None)
        if result is None:
            return
        sent = 0
        while True:
            yield page(query, result)
            sent += len(result.distractors)
            if result.next_offset is None or sent >= query.max_results or gone.is_set():
                break
            with scope():
                following = query.request.about(result.query).at(result.next_offset)
                result = lookup.find(following)


def _first_pages(lookup: RelatedLookup, query: RelatedQuery) -> Iterator[RelatedResult]:
    """The first page of each query subgraph, computed when it is asked for."""
    if query.request.g is not None:
        return iter([lookup.find(query.request)])
    keys = [g.key for g in lookup.subgraphs_of_image(query.image_id)]
    return (
        lookup.for_image(query.image_id, key, request=query.request)[0]
        for key in keys[: query.max_subgraphs]
    )


def page(query: RelatedQuery, result: RelatedResult) -> related_pb2.FindRelatedImagesResponse:
    """One lookup result as a response page (positives first, then distractors)."""
    matched = convert.subgraph_to_proto(result.query)
    out = related_pb2.FindRelatedImagesResponse(query=matched, seed=query.request.seed)
    if query.positives:
        for image_id in result.positives:
            out.images.add(
                image_id=image_id,
                kind=related_pb2.RELATED_KIND_POSITIVE,
                distance=0,
                matched=matched,
                query_key=result.query.key,
            )
    for d in result.distractors:
        out.images.add(
            image_id=d.image_id,
            kind=related_pb2.RELATED_KIND_DISTRACTOR,
            edit_signature=d.signature,
            distance=d.distance,
            matched=convert.subgraph_to_proto(d.subgraph),
            query_key=result.query.key,
        )
    if result.next_offset is not None:
        bound = query.bound(query.request.about(result.query))
        out.next_page_token = convert.encode_page_token({**bound, "offset": result.next_offset})
    return out
