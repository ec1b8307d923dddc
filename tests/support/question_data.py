"""Scene graphs for question-engine tests: the bundled samples and synthetic data, in memory."""

from __future__ import annotations

from covr.scene.model import SceneGraph
from covr_loaders import gqa, imsitu, synthetic, vg
from covr_loaders.jsonio import ByteCounter
from covr_loaders.samples import SAMPLES


def _graphs(items: object) -> list[SceneGraph]:
    return [s for s in items if isinstance(s, SceneGraph)]  # type: ignore[attr-defined]


def bundled_samples() -> dict[str, list[SceneGraph]]:
    """split -> scene graphs of the bundled GQA (val), imSitu (dev) and VG (train) samples."""
    space = imsitu.load_space(
        SAMPLES / "imsitu" / "imsitu_space.json", SAMPLES / "imsitu" / "generation_templates.tab"
    )
    return {
        "val": _graphs(
            gqa.read(SAMPLES / "gqa" / "val_sceneGraphs.json", split="val", counter=ByteCounter())
        ),
        "dev": _graphs(
            imsitu.read(
                SAMPLES / "imsitu" / "dev.json", split="dev", counter=ByteCounter(), space=space
            )
        ),
        "train": _graphs(
            vg.read(SAMPLES / "vg" / "scene_graphs.json", split="train", counter=ByteCounter())
        ),
    }


def synthetic_scenes(images: int, seed: int = 1, split: str = "val") -> list[SceneGraph]:
    return list(synthetic.generate(images, seed=seed, split=split))
