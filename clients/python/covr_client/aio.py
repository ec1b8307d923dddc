"""The asyncio twin of :class:`covr_client.Client` (same arguments, same results, ``await``).

Both clients run the same RPC descriptions (:mod:`covr_client._rpcs`) with the same request
builders and the same retry decision (:class:`covr_client._core.ClientCore`); only the waiting
is asyncio's here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, TypeVar, Unpack

import grpc
import grpc.aio

from covr_client import _requests, _rpcs
from covr_client._core import ClientCore
from covr_client._requests import (
    BatchOptions,
    EvaluateOptions,
    ListImagesOptions,
    QuestionOptions,
    RelatedOptions,
)
from covr_client.types import (
    BatchItem,
    BatchResult,
    Evaluation,
    ExclusivityScore,
    ImportResult,
    ModelInfo,
    NodeType,
    PresenceQuery,
    PresenceScore,
    RelatedPage,
    SceneGraph,
    Statistics,
    Subgraph,
)
from covr_client.types_questions import AsyncQuestionStream, SummaryBox

T = TypeVar("T")


def _channel(
    target: str, creds: grpc.ChannelCredentials | None, options: list[tuple[str, Any]]
) -> grpc.aio.Channel:
    if creds is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, creds, options=options)


class AsyncClient(ClientCore):
    """Asyncio client; see :class:`covr_client.Client` for every argument and default.

    Create and use it inside a running event loop; ``async with`` closes it.
    """

    _open_channel = staticmethod(_channel)

    async def close(self) -> None:
        """Close the channel (calls in flight are cancelled)."""
        await self._channel.close(None)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ the two generic calls

    async def _unary(self, rpc: _rpcs.Unary[T], request: Any, timeout: float | None) -> T:
        """One call of ``rpc`` within the deadline, retried while the policy allows."""
        method, attempts = self._method(rpc), self._attempts(timeout, rpc.idempotent)
        while True:
            try:
                return rpc.result(await method(request, **attempts.next()))
            except grpc.RpcError as exc:
                await asyncio.sleep(attempts.delay(exc))

    async def _stream(
        self, rpc: _rpcs.Stream[T], request: Any, timeout: float | None
    ) -> AsyncIterator[T]:
        """The values of a server stream; retried only while nothing was received."""
        method, attempts = self._method(rpc), self._attempts(timeout, rpc.idempotent)
        while True:
            call = method(request, **attempts.next())
            received = False
            try:
                async for response in call:
                    received = True
                    for item in rpc.items(response):
                        yield item
                return
            except grpc.RpcError as exc:
                await asyncio.sleep(attempts.delay(exc, received=received))
            finally:
                call.cancel()

    # ------------------------------------------------------------------ the RPCs

    async def health(self, *, timeout: float | None = None) -> bool:
        """Whether the service answers SERVING (its store is reachable)."""
        return await self._unary(_rpcs.HEALTH, _requests.health(), timeout)

    async def import_scene_graphs(
        self,
        scene_graphs: Iterable[SceneGraph],
        *,
        strict: bool = False,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> ImportResult:
        """See :meth:`covr_client.Client.import_scene_graphs` (not retried)."""
        request = _requests.import_stream(scene_graphs, strict=strict, dry_run=dry_run)
        return await self._unary(_rpcs.IMPORT_SCENE_GRAPHS, request, timeout)

    async def get_scene_graph(self, image_id: str, *, timeout: float | None = None) -> SceneGraph:
        """The stored scene graph of ``image_id`` (``NotFoundError`` when absent)."""
        request = _requests.get_scene_graph(image_id)
        return await self._unary(_rpcs.GET_SCENE_GRAPH, request, timeout)

    def list_images(
        self, *, timeout: float | None = None, **options: Unpack[ListImagesOptions]
    ) -> AsyncIterator[str]:
        """Every stored image id (optionally of one source/split), in id order."""
        return self._stream(_rpcs.LIST_IMAGES, _requests.list_images(**options), timeout)

    async def list_subgraphs(
        self, image_id: str, *, max_subgraphs: int = 0, timeout: float | None = None
    ) -> list[Subgraph]:
        """The subgraphs of a stored image, smallest first."""
        request = _requests.list_subgraphs(image_id, max_subgraphs)
        return await self._unary(_rpcs.LIST_SUBGRAPHS, request, timeout)

    async def statistics(self, *, timeout: float | None = None) -> Statistics:
        """Node, relationship and per-dataset counts of the store."""
        return await self._unary(_rpcs.STATISTICS, _requests.statistics(), timeout)

    def find_related_images(
        self,
        subgraph: Subgraph | str | None = None,
        *,
        timeout: float | None = None,
        **options: Unpack[RelatedOptions],
    ) -> AsyncIterator[RelatedPage]:
        """See :meth:`covr_client.Client.find_related_images`."""
        request = _requests.related(subgraph, **options)
        return self._stream(_rpcs.FIND_RELATED_IMAGES, request, timeout)

    def find_related_images_batch(
        self,
        images: Iterable[str | BatchItem] | AsyncIterable[str | BatchItem],
        *,
        timeout: float | None = None,
        **options: Unpack[BatchOptions],
    ) -> AsyncIterator[BatchResult]:
        """See :meth:`covr_client.Client.find_related_images_batch`; ``images`` may also be
        an async iterable (read lazily too)."""
        request = (
            _requests.batch_async(images, **options)
            if isinstance(images, AsyncIterable)
            else _requests.batch(images, **options)
        )
        return self._stream(_rpcs.FIND_RELATED_IMAGES_BATCH, request, timeout)

    async def score_exclusivity(
        self, pairs: Sequence[tuple[NodeType, str, str]], *, timeout: float | None = None
    ) -> list[ExclusivityScore]:
        """``m(x, x')`` for ``(node_type, x, x_prime)`` pairs, in order."""
        return await self._unary(_rpcs.SCORE_EXCLUSIVITY, _requests.exclusivity(pairs), timeout)

    async def score_presence(
        self, queries: Sequence[PresenceQuery], *, timeout: float | None = None
    ) -> list[PresenceScore]:
        """Presence probabilities of simple subgraphs in images, in order."""
        return await self._unary(_rpcs.SCORE_PRESENCE, _requests.presence(queries), timeout)

    async def model_info(self, *, timeout: float | None = None) -> list[ModelInfo]:
        """Name, version and ONNX metadata of the served models."""
        return await self._unary(_rpcs.MODEL_INFO, _requests.model_info(), timeout)

    async def evaluate(
        self,
        gold: Sequence[Mapping[str, Any] | str],
        predictions: Mapping[str, Any],
        *,
        timeout: float | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Evaluation:
        """See :meth:`covr_client.Client.evaluate`."""
        request = _requests.evaluation(gold, predictions, **options)
        return await self._unary(_rpcs.EVALUATE, request, timeout)

    def generate_questions(
        self, *, timeout: float | None = None, **options: Unpack[QuestionOptions]
    ) -> AsyncQuestionStream:
        """See :meth:`covr_client.Client.generate_questions` (``summary`` likewise)."""
        request = _requests.questions(**options)
        box = SummaryBox()
        stream = self._stream(_rpcs.generate_questions(box), request, timeout)
        return AsyncQuestionStream(stream, box)
