"""The asyncio twin of :class:`covr_client.Client` (same arguments, same results, ``await``)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from covr_client import _requests
from covr_client._proto import related_pb2, service_pb2_grpc, store_pb2, wire_pb2
from covr_client.client import HEALTH_CHECK, SERVICE_NAME, credentials
from covr_client.config import RetryPolicy, TlsConfig, channel_options
from covr_client.errors import CovrError, from_rpc_error
from covr_client.types import (
    Evaluation,
    Example,
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
    exclusivity_from_proto,
)


class AsyncClient:
    """Asyncio client; see :class:`covr_client.Client` for every argument and default.

    Create and use it inside a running event loop; ``async with`` closes it.
    """

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        tls: TlsConfig | bool | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.target = target
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        creds, extra = credentials(tls)
        opts = [*channel_options(), *extra, *options]
        self._channel = (
            grpc.aio.secure_channel(target, creds, options=opts)
            if creds is not None
            else grpc.aio.insecure_channel(target, options=opts)
        )
        self._stub = service_pb2_grpc.CovrServiceStub(self._channel)
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._health = self._channel.unary_unary(
            HEALTH_CHECK,
            request_serializer=wire_pb2.HealthRequest.SerializeToString,
            response_deserializer=wire_pb2.HealthResponse.FromString,
        )

    async def close(self) -> None:
        await self._channel.close(None)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _deadline(self, timeout: float | None) -> float:
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    async def _retry_after(
        self, error: CovrError, attempt: int, idempotent: bool, deadline: float
    ) -> bool:
        if not idempotent or error.code not in self.retry.retry_codes:
            return False
        if attempt >= self.retry.max_attempts:
            return False
        delay = self.retry.wait(attempt, random.random(), error.retry_after)
        if time.monotonic() + delay >= deadline:
            return False
        await asyncio.sleep(delay)
        return True

    async def _call(
        self,
        method: Callable[..., Any],
        request: Any,
        timeout: float | None,
        *,
        idempotent: bool = True,
    ) -> Any:
        deadline = self._deadline(timeout)
        attempt = 0
        while True:
            attempt += 1
            try:
                return await method(
                    request,
                    timeout=max(0.0, deadline - time.monotonic()),
                    metadata=self._metadata,
                )
            except grpc.RpcError as exc:
                error = from_rpc_error(exc)
                if not await self._retry_after(error, attempt, idempotent, deadline):
                    raise error from None

    async def _stream(
        self, method: Callable[..., Any], request: Any, timeout: float | None
    ) -> AsyncIterator[Any]:
        deadline = self._deadline(timeout)
        attempt = 0
        while True:
            attempt += 1
            call = method(
                request, timeout=max(0.0, deadline - time.monotonic()), metadata=self._metadata
            )
            received = False
            try:
                async for item in call:
                    received = True
                    yield item
                return
            except grpc.RpcError as exc:
                error = from_rpc_error(exc)
                if received or not await self._retry_after(error, attempt, True, deadline):
                    raise error from None
            finally:
                call.cancel()

    async def health(self, *, timeout: float | None = None) -> bool:
        response = await self._call(
            self._health, wire_pb2.HealthRequest(service=SERVICE_NAME), timeout
        )
        return bool(response.status == 1)

    async def import_scene_graphs(
        self,
        scene_graphs: Iterable[SceneGraph],
        *,
        strict: bool = False,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> ImportResult:
        request = _requests.import_stream(scene_graphs, strict=strict, dry_run=dry_run)
        response = await self._call(
            self._stub.ImportSceneGraphs, request, timeout, idempotent=False
        )
        return ImportResult.from_proto(response)

    async def get_scene_graph(self, image_id: str, *, timeout: float | None = None) -> SceneGraph:
        response = await self._call(
            self._stub.GetSceneGraph, store_pb2.GetSceneGraphRequest(image_id=image_id), timeout
        )
        return SceneGraph.from_proto(response.scene_graph)

    async def list_images(
        self,
        *,
        source: str | None = None,
        split: str | None = None,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> AsyncIterator[str]:
        request = _requests.list_images(
            source=source, split=split, page_size=page_size, page_token="", max_pages=0
        )
        async for page in self._stream(self._stub.ListImages, request, timeout):
            for image_id in page.image_ids:
                yield image_id

    async def list_subgraphs(
        self, image_id: str, *, max_subgraphs: int = 0, timeout: float | None = None
    ) -> list[Subgraph]:
        response = await self._call(
            self._stub.ListSubgraphs,
            store_pb2.ListSubgraphsRequest(image_id=image_id, max_subgraphs=max_subgraphs),
            timeout,
        )
        return [Subgraph.from_proto(s) for s in response.subgraphs]

    async def statistics(self, *, timeout: float | None = None) -> Statistics:
        response = await self._call(
            self._stub.GetStatistics, store_pb2.GetStatisticsRequest(), timeout
        )
        return Statistics.from_proto(response)

    async def find_related_images(
        self,
        subgraph: Subgraph | str | None = None,
        *,
        image_id: str | None = None,
        split: str | None = None,
        seed: int = 0,
        page_size: int = 0,
        page_token: str = "",
        max_results: int = 0,
        max_distance: int = 0,
        per_signature_cap: int = 0,
        positives: bool = True,
        distractors: bool = True,
        presence_filter: bool = True,
        exclusivity_model: bool = True,
        max_subgraphs: int = 0,
        timeout: float | None = None,
    ) -> AsyncIterator[RelatedPage]:
        request = _requests.related(
            subgraph,
            image_id=image_id,
            split=split,
            seed=seed,
            page_size=page_size,
            page_token=page_token,
            max_results=max_results,
            max_distance=max_distance,
            per_signature_cap=per_signature_cap,
            positives=positives,
            distractors=distractors,
            presence_filter=presence_filter,
            exclusivity_model=exclusivity_model,
            max_subgraphs=max_subgraphs,
        )
        async for page in self._stream(self._stub.FindRelatedImages, request, timeout):
            yield RelatedPage.from_proto(page)

    async def score_exclusivity(
        self, pairs: Sequence[tuple[NodeType, str, str]], *, timeout: float | None = None
    ) -> list[ExclusivityScore]:
        response = await self._call(
            self._stub.ScoreExclusivity, _requests.exclusivity(pairs), timeout
        )
        return exclusivity_from_proto(response)

    async def score_presence(
        self, queries: Sequence[PresenceQuery], *, timeout: float | None = None
    ) -> list[PresenceScore]:
        response = await self._call(self._stub.ScorePresence, _requests.presence(queries), timeout)
        return [PresenceScore(s.image_id, s.subgraph_key, s.score) for s in response.scores]

    async def model_info(self, *, timeout: float | None = None) -> list[ModelInfo]:
        response = await self._call(
            self._stub.GetModelInfo, related_pb2.GetModelInfoRequest(), timeout
        )
        return [ModelInfo.from_proto(m) for m in response.models]

    async def evaluate(
        self,
        gold: Sequence[Mapping[str, Any] | str],
        predictions: Mapping[str, Any],
        *,
        train: Sequence[Mapping[str, Any] | str] = (),
        iid: Sequence[Mapping[str, Any] | str] = (),
        easiness: Mapping[str, float] | None = None,
        text_accuracy: float | None = None,
        iid_size_accuracy: float | None = None,
        lexical: bool = False,
        seed: int = 0,
        timeout: float | None = None,
    ) -> Evaluation:
        request = _requests.evaluation(
            gold,
            predictions,
            train=train,
            iid=iid,
            easiness=easiness,
            text_accuracy=text_accuracy,
            iid_size_accuracy=iid_size_accuracy,
            lexical=lexical,
            seed=seed,
        )
        return Evaluation.from_proto(await self._call(self._stub.Evaluate, request, timeout))

    async def generate_questions(
        self,
        *,
        image_id: str | None = None,
        subgraph: Subgraph | str | None = None,
        templates: Sequence[str] = (),
        count: int = 0,
        seed: int = 0,
        split: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Example]:
        """Generated examples (question, images, answer, program) as they arrive.

        Give ``image_id`` (questions about its subgraphs) or ``subgraph`` (a key or parts:
        questions about it; the source image is a seeded choice among the stored images of
        ``split`` that contain it, of any split when ``split`` is ``None``). Raises
        ``NotFoundError`` for an unknown image or a subgraph no stored image contains.
        """
        request = _requests.questions(
            image_id=image_id,
            subgraph=subgraph,
            templates=templates,
            count=count,
            seed=seed,
            split=split,
        )
        async for response in self._stream(self._stub.GenerateQuestions, request, timeout):
            for example in response.examples:
                yield Example.from_proto(example)
