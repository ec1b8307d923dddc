"""The synchronous client. Every call has a deadline (``timeout``, default from the client),
raises :class:`~covr_client.errors.CovrError` subclasses instead of ``grpc.RpcError``, and
idempotent calls (all but the import stream) are retried with backoff on ``UNAVAILABLE``.
Streams are iterators; leaving the loop early cancels the call on the server.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from covr_client import _requests
from covr_client._proto import related_pb2, service_pb2_grpc, store_pb2, wire_pb2
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

T = TypeVar("T")

HEALTH_CHECK = "/grpc.health.v1.Health/Check"
SERVICE_NAME = "covr.v1.CovrService"


def credentials(tls: TlsConfig | bool | None) -> tuple[grpc.ChannelCredentials | None, list[Any]]:
    """Channel credentials and extra options for a TLS setting (``None``/``False`` = plain)."""
    if tls is None or tls is False:
        return None, []
    config = TlsConfig() if tls is True else tls
    creds = grpc.ssl_channel_credentials(
        root_certificates=config.root_certificates,
        private_key=config.private_key,
        certificate_chain=config.certificate_chain,
    )
    extra = [("grpc.ssl_target_name_override", config.server_name)] if config.server_name else []
    return creds, extra


class Client:
    """Client of the COVR graph service.

    Args:
        target: ``host:port`` of the server (``127.0.0.1:50051``).
        token: bearer token sent with every call (``COVR_SERVICE_TOKEN`` of the server);
            ``None`` = no authentication.
        tls: ``None``/``False`` = plaintext; ``True`` = TLS with the system's roots; a
            :class:`TlsConfig` for a private CA, a self-signed certificate or mutual TLS.
        timeout: default deadline of each call in seconds (a stream: of the whole stream).
        retry: retry policy of idempotent calls (default: 4 attempts on ``UNAVAILABLE``).
        options: extra gRPC channel arguments.

    Use it as a context manager, or call :meth:`close`.
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
            grpc.secure_channel(target, creds, options=opts)
            if creds is not None
            else grpc.insecure_channel(target, options=opts)
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

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _deadline(self, timeout: float | None) -> float:
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _call(
        self,
        method: Callable[..., T],
        request: Any,
        timeout: float | None,
        *,
        idempotent: bool = True,
    ) -> T:
        deadline = self._deadline(timeout)
        attempt = 0
        while True:
            attempt += 1
            try:
                return method(
                    request,
                    timeout=max(0.0, deadline - time.monotonic()),
                    metadata=self._metadata,
                )
            except grpc.RpcError as exc:
                error = from_rpc_error(exc)
                if not self._retry_after(error, attempt, idempotent, deadline):
                    raise error from None

    def _retry_after(
        self, error: CovrError, attempt: int, idempotent: bool, deadline: float
    ) -> bool:
        if not idempotent or error.code not in self.retry.retry_codes:
            return False
        if attempt >= self.retry.max_attempts:
            return False
        delay = self.retry.wait(attempt, random.random(), error.retry_after)
        if time.monotonic() + delay >= deadline:
            return False
        time.sleep(delay)
        return True

    def _stream(
        self, method: Callable[..., Any], request: Any, timeout: float | None
    ) -> Iterator[Any]:
        deadline = self._deadline(timeout)
        attempt = 0
        while True:
            attempt += 1
            call = method(
                request, timeout=max(0.0, deadline - time.monotonic()), metadata=self._metadata
            )
            received = False
            try:
                for item in call:
                    received = True
                    yield item
                return
            except grpc.RpcError as exc:
                error = from_rpc_error(exc)
                # Only a stream that sent nothing yet is retried: no duplicates reach the caller.
                if received or not self._retry_after(error, attempt, True, deadline):
                    raise error from None
            finally:
                call.cancel()  # no-op when finished; stops the server when the caller left early

    # ------------------------------------------------------------------ health

    def health(self, *, timeout: float | None = None) -> bool:
        """Whether the service answers SERVING (its store is reachable)."""
        response = self._call(self._health, wire_pb2.HealthRequest(service=SERVICE_NAME), timeout)
        return bool(response.status == 1)

    # ------------------------------------------------------------------ scene graphs

    def import_scene_graphs(
        self,
        scene_graphs: Iterable[SceneGraph],
        *,
        strict: bool = False,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> ImportResult:
        """Stream scene graphs into the store (validated like ``covr load``; idempotent).

        Bad scene graphs are skipped and listed in ``problems`` unless ``strict``, which
        refuses the whole import (``InvalidArgumentError``) and writes nothing. Not retried:
        the iterator cannot be replayed (re-importing is safe, though).
        """
        request = _requests.import_stream(scene_graphs, strict=strict, dry_run=dry_run)
        response = self._call(self._stub.ImportSceneGraphs, request, timeout, idempotent=False)
        return ImportResult.from_proto(response)

    def get_scene_graph(self, image_id: str, *, timeout: float | None = None) -> SceneGraph:
        """The stored scene graph of ``image_id`` (``NotFoundError`` when absent)."""
        response = self._call(
            self._stub.GetSceneGraph, store_pb2.GetSceneGraphRequest(image_id=image_id), timeout
        )
        return SceneGraph.from_proto(response.scene_graph)

    def list_images(
        self,
        *,
        source: str | None = None,
        split: str | None = None,
        page_size: int = 0,
        timeout: float | None = None,
    ) -> Iterator[str]:
        """Every stored image id (optionally of one source/split), in id order."""
        request = _requests.list_images(
            source=source, split=split, page_size=page_size, page_token="", max_pages=0
        )
        for page in self._stream(self._stub.ListImages, request, timeout):
            yield from page.image_ids

    def list_subgraphs(
        self, image_id: str, *, max_subgraphs: int = 0, timeout: float | None = None
    ) -> list[Subgraph]:
        """The subgraphs of a stored image, smallest first."""
        response = self._call(
            self._stub.ListSubgraphs,
            store_pb2.ListSubgraphsRequest(image_id=image_id, max_subgraphs=max_subgraphs),
            timeout,
        )
        return [Subgraph.from_proto(s) for s in response.subgraphs]

    def statistics(self, *, timeout: float | None = None) -> Statistics:
        """Node, relationship and per-dataset counts of the store."""
        response = self._call(self._stub.GetStatistics, store_pb2.GetStatisticsRequest(), timeout)
        return Statistics.from_proto(response)

    # ------------------------------------------------------------------ related, models

    def find_related_images(
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
    ) -> Iterator[RelatedPage]:
        """Pages of positives and distractors for a subgraph (key or parts) or an image.

        ``presence_filter=False`` keeps distractors the presence model would drop;
        ``exclusivity_model=False`` scores substitutions with the reviewed word lists instead of
        the ONNX exclusivity model.
        """
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
        for page in self._stream(self._stub.FindRelatedImages, request, timeout):
            yield RelatedPage.from_proto(page)

    def score_exclusivity(
        self, pairs: Sequence[tuple[NodeType, str, str]], *, timeout: float | None = None
    ) -> list[ExclusivityScore]:
        """``m(x, x')`` for ``(node_type, x, x_prime)`` pairs, in order."""
        response = self._call(self._stub.ScoreExclusivity, _requests.exclusivity(pairs), timeout)
        return exclusivity_from_proto(response)

    def score_presence(
        self, queries: Sequence[PresenceQuery], *, timeout: float | None = None
    ) -> list[PresenceScore]:
        """Presence probabilities of simple subgraphs in images, in order."""
        response: related_pb2.ScorePresenceResponse = self._call(
            self._stub.ScorePresence, _requests.presence(queries), timeout
        )
        return [PresenceScore(s.image_id, s.subgraph_key, s.score) for s in response.scores]

    def model_info(self, *, timeout: float | None = None) -> list[ModelInfo]:
        """Name, version and ONNX metadata of the served models."""
        response = self._call(self._stub.GetModelInfo, related_pb2.GetModelInfoRequest(), timeout)
        return [ModelInfo.from_proto(m) for m in response.models]

    def evaluate(
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
        """Accuracy per template and property, MAJ/MAJTEMPL baselines, generalization score,
        systematicity gap and easiness AUC (docs/splits.md) of ``predictions`` (qid -> answer)
        for ``gold`` examples (dicts or JSON lines, as exported)."""
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
        return Evaluation.from_proto(self._call(self._stub.Evaluate, request, timeout))

    # ------------------------------------------------------------------ questions

    def generate_questions(
        self,
        *,
        image_id: str | None = None,
        subgraph: Subgraph | str | None = None,
        templates: Sequence[str] = (),
        count: int = 0,
        seed: int = 0,
        split: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[Example]:
        """Generated examples (question, images, answer, program) as they are produced.

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
        for response in self._stream(self._stub.GenerateQuestions, request, timeout):
            for example in response.examples:
                yield Example.from_proto(example)
