"""The synchronous client. Every call has a deadline (``timeout``, default from the client),
raises :class:`~covr_client.errors.CovrError` subclasses instead of ``grpc.RpcError``, and
idempotent calls (all but the import stream) are retried with backoff on ``UNAVAILABLE`` and,
honouring the server's retry hint, on ``RESOURCE_EXHAUSTED``.
Streams are iterators; leaving the loop early cancels the call on the server.

Each method names its RPC's description (:mod:`covr_client._rpcs`) and builds the request
(:mod:`covr_client._requests`); :meth:`Client._unary` and :meth:`Client._stream` run them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, Unpack

import grpc

from covr_client import _requests, _rpcs
from covr_client._core import ClientCore, credentials
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
from covr_client.types_questions import QuestionStream, SummaryBox

T = TypeVar("T")

HEALTH_CHECK = _rpcs.HEALTH_CHECK
SERVICE_NAME = _rpcs.SERVICE_NAME

__all__ = ["HEALTH_CHECK", "SERVICE_NAME", "Client", "credentials"]


def _channel(
    target: str, creds: grpc.ChannelCredentials | None, options: list[tuple[str, Any]]
) -> grpc.Channel:
    if creds is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, creds, options=options)


class Client(ClientCore):
    """Client of the COVR graph service.

    Args:
        target: ``host:port`` of the server (``127.0.0.1:50051``).
        token: bearer token sent with every call (``COVR_SERVICE_TOKEN`` of the server);
            ``None`` = no authentication.
        tls: ``None``/``False`` = plaintext; ``True`` = TLS with the system's roots; a
            :class:`TlsConfig` for a private CA, a self-signed certificate or mutual TLS.
        timeout: default deadline of each call in seconds (a stream: of the whole stream).
        retry: retry policy of idempotent calls (default: 4 attempts on ``UNAVAILABLE``;
            a busy server's ``RESOURCE_EXHAUSTED`` waited out as its retry hint says).
        options: extra gRPC channel arguments.

    Use it as a context manager, or call :meth:`close`.
    """

    _open_channel = staticmethod(_channel)

    def close(self) -> None:
        """Close the channel (calls in flight are cancelled)."""
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the two generic calls

    def _unary(self, rpc: _rpcs.Unary[T], request: Any, timeout: float | None) -> T:
        """One call of ``rpc`` within the deadline, retried while the policy allows."""
        method, attempts = self._method(rpc), self._attempts(timeout, rpc.idempotent)
        while True:
            try:
                return rpc.result(method(request, **attempts.next()))
            except grpc.RpcError as exc:
                time.sleep(attempts.delay(exc))

    def _stream(self, rpc: _rpcs.Stream[T], request: Any, timeout: float | None) -> Iterator[T]:
        """The values of a server stream; retried only while nothing was received (so no
        duplicates reach the caller); leaving early cancels the call on the server."""
        method, attempts = self._method(rpc), self._attempts(timeout, rpc.idempotent)
        while True:
            call = method(request, **attempts.next())
            received = False
            try:
                for response in call:
                    received = True
                    yield from rpc.items(response)
                return
            except grpc.RpcError as exc:
                time.sleep(attempts.delay(exc, received=received))
            finally:
                call.cancel()  # no-op when finished; stops the server when the caller left early

    # ------------------------------------------------------------------ the RPCs

    def health(self, *, timeout: float | None = None) -> bool:
        """Whether the service answers SERVING (its store is reachable)."""
        return self._unary(_rpcs.HEALTH, _requests.health(), timeout)

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
        return self._unary(_rpcs.IMPORT_SCENE_GRAPHS, request, timeout)

    def get_scene_graph(self, image_id: str, *, timeout: float | None = None) -> SceneGraph:
        """The stored scene graph of ``image_id`` (``NotFoundError`` when absent)."""
        return self._unary(_rpcs.GET_SCENE_GRAPH, _requests.get_scene_graph(image_id), timeout)

    def list_images(
        self, *, timeout: float | None = None, **options: Unpack[ListImagesOptions]
    ) -> Iterator[str]:
        """Every stored image id (optionally of one source/split), in id order."""
        return self._stream(_rpcs.LIST_IMAGES, _requests.list_images(**options), timeout)

    def list_subgraphs(
        self, image_id: str, *, max_subgraphs: int = 0, timeout: float | None = None
    ) -> list[Subgraph]:
        """The subgraphs of a stored image, smallest first."""
        request = _requests.list_subgraphs(image_id, max_subgraphs)
        return self._unary(_rpcs.LIST_SUBGRAPHS, request, timeout)

    def statistics(self, *, timeout: float | None = None) -> Statistics:
        """Node, relationship and per-dataset counts of the store."""
        return self._unary(_rpcs.STATISTICS, _requests.statistics(), timeout)

    def find_related_images(
        self,
        subgraph: Subgraph | str | None = None,
        *,
        timeout: float | None = None,
        **options: Unpack[RelatedOptions],
    ) -> Iterator[RelatedPage]:
        """Pages of positives and distractors for a subgraph (key or parts) or an image
        (``image_id=``); the options are described by :class:`RelatedOptions`."""
        request = _requests.related(subgraph, **options)
        return self._stream(_rpcs.FIND_RELATED_IMAGES, request, timeout)

    def find_related_images_batch(
        self,
        images: Iterable[str | BatchItem],
        *,
        timeout: float | None = None,
        **options: Unpack[BatchOptions],
    ) -> Iterator[BatchResult]:
        """Positives and distractors of many images in one stream: one :class:`BatchResult`
        per image id or :class:`BatchItem`, in input order, while later images are still
        being sent. ``images`` is read lazily, as flow control lets the server take more, so
        a generator of 100k ids is never materialized. A bad item gets ``problems`` and the
        stream goes on; ``timeout`` bounds the whole stream. Not retried (the input cannot
        be replayed); leaving the loop early cancels the call."""
        request = _requests.batch(images, **options)
        return self._stream(_rpcs.FIND_RELATED_IMAGES_BATCH, request, timeout)

    def score_exclusivity(
        self, pairs: Sequence[tuple[NodeType, str, str]], *, timeout: float | None = None
    ) -> list[ExclusivityScore]:
        """``m(x, x')`` for ``(node_type, x, x_prime)`` pairs, in order."""
        return self._unary(_rpcs.SCORE_EXCLUSIVITY, _requests.exclusivity(pairs), timeout)

    def score_presence(
        self, queries: Sequence[PresenceQuery], *, timeout: float | None = None
    ) -> list[PresenceScore]:
        """Presence probabilities of simple subgraphs in images, in order."""
        return self._unary(_rpcs.SCORE_PRESENCE, _requests.presence(queries), timeout)

    def model_info(self, *, timeout: float | None = None) -> list[ModelInfo]:
        """Name, version and ONNX metadata of the served models."""
        return self._unary(_rpcs.MODEL_INFO, _requests.model_info(), timeout)

    def evaluate(
        self,
        gold: Sequence[Mapping[str, Any] | str],
        predictions: Mapping[str, Any],
        *,
        timeout: float | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> Evaluation:
        """Accuracy per template and property, MAJ/MAJTEMPL baselines, generalization score,
        systematicity gap and easiness AUC (docs/splits.md) of ``predictions`` (qid -> answer)
        for ``gold`` examples (dicts or JSON lines, as exported)."""
        request = _requests.evaluation(gold, predictions, **options)
        return self._unary(_rpcs.EVALUATE, request, timeout)

    def generate_questions(
        self, *, timeout: float | None = None, **options: Unpack[QuestionOptions]
    ) -> QuestionStream:
        """Generated examples (question, images, answer, program) as they are produced; give
        ``image_id`` or ``subgraph`` (see :class:`QuestionOptions`). Raises ``NotFoundError``
        for an unknown image or a subgraph no stored image contains. With ``per_template`` or
        ``max_image_share`` the returned iterator's ``summary`` is set once it is exhausted
        (per form: wanted, made, dropped; :class:`covr_client.GenerationSummary`)."""
        request = _requests.questions(**options)
        box = SummaryBox()
        return QuestionStream(self._stream(_rpcs.generate_questions(box), request, timeout), box)
