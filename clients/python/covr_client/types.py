"""Typed values the SDK takes and returns (frozen dataclasses), and their message conversions.

Scene graphs and subgraphs mirror the server's domain model; everything numeric that the server
stores as a whole number comes back as ``int``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from covr_client._mirror import to_message
from covr_client._proto import evaluation_pb2, questions_pb2, related_pb2, scene_pb2, store_pb2
from covr_client.types_batch import BatchItem as BatchItem
from covr_client.types_batch import BatchProblem as BatchProblem
from covr_client.types_batch import BatchResult as BatchResult
from covr_client.types_batch import Distractor as Distractor
from covr_client.types_batch import DistractorRecord as DistractorRecord
from covr_client.types_questions import AsyncQuestionStream as AsyncQuestionStream
from covr_client.types_questions import FormSummary as FormSummary
from covr_client.types_questions import GenerationSummary as GenerationSummary
from covr_client.types_questions import ImageSpread as ImageSpread
from covr_client.types_questions import QuestionStream as QuestionStream

Number = int | float
Scalar = str | int | float | bool
NodeType = Literal["object", "attribute", "relation", "relmod"]

_NODE_TYPES: dict[str, int] = {
    "object": scene_pb2.NODE_TYPE_OBJECT,
    "attribute": scene_pb2.NODE_TYPE_ATTRIBUTE,
    "relation": scene_pb2.NODE_TYPE_RELATION,
    "relmod": scene_pb2.NODE_TYPE_RELMOD,
}
_NODE_NAMES = {v: k for k, v in _NODE_TYPES.items()}


def _num(value: float) -> Number:
    return int(value) if value.is_integer() else value


@dataclass(frozen=True)
class Box:
    x: Number
    y: Number
    w: Number
    h: Number


@dataclass(frozen=True)
class Object:
    id: str
    name: str
    attributes: tuple[str, ...] = ()
    box: Box | None = None
    synsets: tuple[str, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class RelMod:
    id: str
    name: str
    object: str


@dataclass(frozen=True)
class Relation:
    id: str
    name: str
    subject: str
    object: str
    mods: tuple[RelMod, ...] = ()
    synsets: tuple[str, ...] = ()


@dataclass(frozen=True)
class SceneGraph:
    """One image's scene graph; ``image_id`` is ``"<source>:<original_id>"``."""

    source: str
    original_id: str
    split: str
    objects: tuple[Object, ...] = ()
    relations: tuple[Relation, ...] = ()
    width: Number | None = None
    height: Number | None = None
    extras: Mapping[str, Scalar] = field(default_factory=dict)

    @property
    def image_id(self) -> str:
        return f"{self.source}:{self.original_id}"

    def to_proto(self) -> scene_pb2.SceneGraph:
        """The request message (fields mirrored by name, :mod:`covr_client._mirror`)."""
        return to_message(self, scene_pb2.SceneGraph())

    @classmethod
    def from_proto(cls, msg: scene_pb2.SceneGraph) -> SceneGraph:
        extras: dict[str, Scalar] = {}
        for key, scalar in msg.extras.items():
            kind = scalar.WhichOneof("kind")
            if kind is not None:
                extras[key] = getattr(scalar, kind)
        return cls(
            source=msg.source,
            original_id=msg.original_id,
            split=msg.split,
            objects=tuple(
                Object(
                    id=o.id,
                    name=o.name,
                    attributes=tuple(o.attributes),
                    box=Box(_num(o.box.x), _num(o.box.y), _num(o.box.w), _num(o.box.h))
                    if o.HasField("box")
                    else None,
                    synsets=tuple(o.synsets),
                    names=tuple(o.names),
                )
                for o in msg.objects
            ),
            relations=tuple(
                Relation(
                    id=r.id,
                    name=r.name,
                    subject=r.subject,
                    object=r.object,
                    mods=tuple(RelMod(m.id, m.name, m.object) for m in r.mods),
                    synsets=tuple(r.synsets),
                )
                for r in msg.relations
            ),
            width=_num(msg.width) if msg.HasField("width") else None,
            height=_num(msg.height) if msg.HasField("height") else None,
            extras=extras,
        )


@dataclass(frozen=True)
class SubgraphObject:
    name: str
    attribute: str | None = None


@dataclass(frozen=True)
class SubgraphRelation:
    name: str
    subject: int
    object: int


@dataclass(frozen=True)
class SubgraphRelMod:
    name: str
    relation: int
    object: int


@dataclass(frozen=True)
class Subgraph:
    """A COVR subgraph (``objects[0]`` is the root). ``key``/``shape``/``text`` come from the
    server; to send one, give either its parts or just a key string to the client methods."""

    objects: tuple[SubgraphObject, ...]
    relations: tuple[SubgraphRelation, ...] = ()
    relmods: tuple[SubgraphRelMod, ...] = ()
    key: str = ""
    shape: str = ""
    text: str = ""

    def to_proto(self) -> scene_pb2.Subgraph:
        """The request message of the parts (key, shape and text are the server's to set)."""
        return to_message(replace(self, key="", shape="", text=""), scene_pb2.Subgraph())

    @classmethod
    def from_proto(cls, msg: scene_pb2.Subgraph) -> Subgraph:
        return cls(
            objects=tuple(
                SubgraphObject(o.name, o.attribute if o.HasField("attribute") else None)
                for o in msg.objects
            ),
            relations=tuple(SubgraphRelation(r.name, r.subject, r.object) for r in msg.relations),
            relmods=tuple(SubgraphRelMod(m.name, m.relation, m.object) for m in msg.relmods),
            key=msg.key,
            shape=msg.shape,
            text=msg.text,
        )


def subgraph_ref(subgraph: Subgraph | str) -> scene_pb2.SubgraphRef:
    """A request's reference to a subgraph: a key string or the parts."""
    if isinstance(subgraph, str):
        return scene_pb2.SubgraphRef(key=subgraph)
    return scene_pb2.SubgraphRef(subgraph=subgraph.to_proto())


@dataclass(frozen=True)
class ImportProblem:
    index: int
    image_id: str
    field: str
    message: str


@dataclass(frozen=True)
class ImportResult:
    received: int
    valid: int
    written: int
    skipped: int
    problems: tuple[ImportProblem, ...]
    nodes_created: int
    relationships_created: int
    dry_run: bool

    @classmethod
    def from_proto(cls, msg: store_pb2.ImportSceneGraphsResponse) -> ImportResult:
        return cls(
            received=msg.received,
            valid=msg.valid,
            written=msg.written,
            skipped=msg.skipped,
            problems=tuple(
                ImportProblem(p.index, p.image_id, p.field, p.message) for p in msg.problems
            ),
            nodes_created=msg.nodes_created,
            relationships_created=msg.relationships_created,
            dry_run=msg.dry_run,
        )


@dataclass(frozen=True)
class DatasetStatistics:
    source: str
    split: str
    images: int
    objects: int
    attributes: int
    relations: int
    relmods: int

    @classmethod
    def from_proto(cls, msg: store_pb2.DatasetStatistics) -> DatasetStatistics:
        return cls(
            msg.source,
            msg.split,
            msg.images,
            msg.objects,
            msg.attributes,
            msg.relations,
            msg.relmods,
        )


@dataclass(frozen=True)
class Statistics:
    backend: str
    nodes: Mapping[str, int]
    relationships: Mapping[str, int]
    datasets: tuple[DatasetStatistics, ...]
    totals: DatasetStatistics

    @classmethod
    def from_proto(cls, msg: store_pb2.GetStatisticsResponse) -> Statistics:
        return cls(
            backend=msg.backend,
            nodes=dict(msg.nodes),
            relationships=dict(msg.relationships),
            datasets=tuple(DatasetStatistics.from_proto(d) for d in msg.datasets),
            totals=DatasetStatistics.from_proto(msg.totals),
        )


@dataclass(frozen=True)
class RelatedImage:
    image_id: str
    kind: Literal["positive", "distractor"]
    edit_signature: str
    distance: int
    matched: Subgraph
    query_key: str


@dataclass(frozen=True)
class RelatedPage:
    """One page of a related-images stream (for one query subgraph)."""

    query: Subgraph
    images: tuple[RelatedImage, ...]
    next_page_token: str
    seed: int

    @classmethod
    def from_proto(cls, msg: related_pb2.FindRelatedImagesResponse) -> RelatedPage:
        return cls(
            query=Subgraph.from_proto(msg.query),
            images=tuple(
                RelatedImage(
                    image_id=i.image_id,
                    kind="positive"
                    if i.kind == related_pb2.RELATED_KIND_POSITIVE
                    else "distractor",
                    edit_signature=i.edit_signature,
                    distance=i.distance,
                    matched=Subgraph.from_proto(i.matched),
                    query_key=i.query_key,
                )
                for i in msg.images
            ),
            next_page_token=msg.next_page_token,
            seed=msg.seed,
        )

    def positives(self) -> tuple[RelatedImage, ...]:
        """The page's images that contain the query subgraph, in page order."""
        return tuple(i for i in self.images if i.kind == "positive")

    def distractors(self) -> tuple[RelatedImage, ...]:
        """The page's distractors (an edit of the query subgraph, ``edit_signature`` says
        which), in page order: what a question needs beside the positives."""
        return tuple(i for i in self.images if i.kind == "distractor")


@dataclass(frozen=True)
class ExclusivityScore:
    node_type: NodeType
    x: str
    x_prime: str
    score: float
    exclusive: bool


def term_pair(node_type: NodeType, x: str, x_prime: str) -> related_pb2.TermPair:
    if node_type not in _NODE_TYPES:
        raise ValueError(f"node_type must be one of {sorted(_NODE_TYPES)}, got {node_type!r}")
    return related_pb2.TermPair(node_type=_NODE_TYPES[node_type], x=x, x_prime=x_prime)  # type: ignore[arg-type]


def exclusivity_from_proto(msg: related_pb2.ScoreExclusivityResponse) -> list[ExclusivityScore]:
    return [
        ExclusivityScore(
            node_type=_NODE_NAMES.get(s.pair.node_type, "object"),  # type: ignore[arg-type]
            x=s.pair.x,
            x_prime=s.pair.x_prime,
            score=s.score,
            exclusive=s.exclusive,
        )
        for s in msg.scores
    ]


@dataclass(frozen=True)
class PresenceQuery:
    subgraph: Subgraph | str
    image_id: str
    image_features: tuple[float, ...] = ()


@dataclass(frozen=True)
class PresenceScore:
    image_id: str
    subgraph_key: str
    score: float


@dataclass(frozen=True)
class TensorSpec:
    name: str
    type: str
    shape: tuple[str, ...]


@dataclass(frozen=True)
class ModelInfo:
    name: str
    version: str
    kind: str
    path: str
    sha256: str
    metadata: Mapping[str, str]
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]

    @classmethod
    def from_proto(cls, msg: related_pb2.ModelInfo) -> ModelInfo:
        return cls(
            name=msg.name,
            version=msg.version,
            kind=msg.kind,
            path=msg.path,
            sha256=msg.sha256,
            metadata=dict(msg.metadata),
            inputs=tuple(TensorSpec(t.name, t.type, tuple(t.shape)) for t in msg.inputs),
            outputs=tuple(TensorSpec(t.name, t.type, tuple(t.shape)) for t in msg.outputs),
        )


ProgramArgument = str | int | tuple["ProgramStep", ...]


@dataclass(frozen=True)
class ProgramStep:
    operation: str
    arguments: tuple[ProgramArgument, ...]
    dependencies: tuple[int, ...]


def _step_dict(step: ProgramStep) -> dict[str, Any]:
    """A step as ``covr generate`` writes it (a nested program is a list of step objects)."""
    return {
        "operation": step.operation,
        "arguments": [
            [_step_dict(s) for s in a] if isinstance(a, tuple) else a for a in step.arguments
        ],
        "dependencies": list(step.dependencies),
    }


EXAMPLE_REQUIRED = (
    "qid",
    "utterance",
    "scenes",
    "answer",
    "pattern_name",
    "program",
    "template",
    "answer_type",
    "source_image",
    "generator_version",
    "split",
)
"""Fields every record of ``covr generate`` has a value for; :meth:`Example.to_dict` refuses
an example that lacks one rather than write a record the CLI never writes."""


def _program(msg: questions_pb2.Program) -> tuple[ProgramStep, ...]:
    steps = []
    for step in msg.steps:
        arguments: list[ProgramArgument] = []
        for argument in step.arguments:
            kind = argument.WhichOneof("kind")
            if kind == "text":
                arguments.append(argument.text)
            elif kind == "number":
                arguments.append(argument.number)
            elif kind == "program":
                arguments.append(_program(argument.program))
        steps.append(ProgramStep(step.operation, tuple(arguments), tuple(step.dependencies)))
    return tuple(steps)


@dataclass(frozen=True)
class Example:
    """One generated question with its images, answer, executable program and provenance.

    ``signatures`` maps every shown image to the edit signatures that brought it (empty: the
    image contains the subgraph). ``subgraphs`` maps roles (``g``, ``g2``) to subgraph keys.
    """

    qid: str
    utterance: str
    scenes: tuple[str, ...]
    answer: bool | int | str | None
    pattern_name: str
    program: tuple[ProgramStep, ...]
    properties: tuple[str, ...]
    source_image: str
    subgraphs: Mapping[str, str]
    signatures: Mapping[str, tuple[str, ...]]
    seed: int
    generator_version: str
    template: str
    paper_template: str
    answer_type: str
    split: str
    structure: tuple[int, ...]

    @classmethod
    def from_proto(cls, msg: questions_pb2.Example) -> Example:
        kind = msg.answer.WhichOneof("kind")
        answer: bool | int | str | None = getattr(msg.answer, kind) if kind else None
        p = msg.provenance
        return cls(
            qid=msg.qid,
            utterance=msg.utterance,
            scenes=tuple(msg.scenes),
            answer=answer,
            pattern_name=msg.pattern_name,
            program=_program(msg.program),
            properties=tuple(msg.properties),
            source_image=p.source_image,
            subgraphs=dict(p.subgraphs),
            signatures={s.image_id: tuple(s.signatures) for s in p.signatures},
            seed=p.seed,
            generator_version=p.generator_version,
            template=p.template,
            paper_template=p.paper_template,
            answer_type=p.answer_type,
            split=p.split,
            structure=tuple(p.structure),
        )

    def to_dict(self) -> dict[str, Any]:
        """The example as one record of ``covr generate``'s JSONL file: the same keys in the
        same order with the same values (lists for tuples, nested programs as lists of steps),
        so SDK output and CLI output can be mixed, diffed and read by every ``covr`` command
        (``covr_client.write_jsonl`` writes the same bytes as the CLI).

        Raises ``ValueError`` naming the empty fields when the example is partial (e.g. built
        by hand, or from a server that sent no provenance): such a record would not load in
        ``covr split`` or ``covr evaluate``.
        """
        missing = [
            name
            for name in EXAMPLE_REQUIRED
            if getattr(self, name) is None or getattr(self, name) in ("", ())
        ]
        if missing:
            raise ValueError(
                f"example {self.qid or '(no qid)'} is partial: empty {', '.join(missing)}"
            )
        return {
            "qid": self.qid,
            "utterance": self.utterance,
            "scenes": list(self.scenes),
            "answer": self.answer,
            "pattern_name": self.pattern_name,
            "program": [_step_dict(s) for s in self.program],
            "properties": list(self.properties),
            "template": self.template,
            "paper_template": self.paper_template,
            "answer_type": self.answer_type,
            "source_image": self.source_image,
            # role order (g, g2), as the engine writes them: a protobuf map keeps no order
            "subgraphs": dict(sorted(self.subgraphs.items())),
            "structure": list(self.structure),
            "signatures": {image: list(self.signatures.get(image, ())) for image in self.scenes},
            "seed": self.seed,
            "generator_version": self.generator_version,
            "split": self.split,
        }


@dataclass(frozen=True)
class Evaluation:
    """Metrics of one ``evaluate`` call; ``report`` is the whole report as ``covr evaluate``
    prints it (per-template/property counts, baselines, inputs of the derived scores)."""

    examples: int
    predicted: int
    missing: int
    accuracy: float
    per_template: Mapping[str, float | None]
    per_property: Mapping[str, float | None]
    maj: float | None
    majtempl: float | None
    generalization_score: float | None
    systematicity_gap: float | None
    easiness_auc: float | None
    report: Mapping[str, Any]

    @classmethod
    def from_proto(cls, msg: evaluation_pb2.EvaluateResponse) -> Evaluation:
        def opt(name: str) -> float | None:
            return float(getattr(msg, name)) if msg.HasField(name) else None  # type: ignore[arg-type]

        def groups(entries: Mapping[str, evaluation_pb2.GroupAccuracy]) -> dict[str, float | None]:
            return {k: (v.accuracy if v.HasField("accuracy") else None) for k, v in entries.items()}

        return cls(
            examples=msg.examples,
            predicted=msg.predicted,
            missing=msg.missing,
            accuracy=msg.accuracy,
            per_template=groups(msg.per_template),
            per_property=groups(msg.per_property),
            maj=opt("maj"),
            majtempl=opt("majtempl"),
            generalization_score=opt("generalization_score"),
            systematicity_gap=opt("systematicity_gap"),
            easiness_auc=opt("easiness_auc"),
            report=json.loads(msg.report_json) if msg.report_json else {},
        )
