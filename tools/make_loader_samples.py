"""Writes the bundled loader samples (loaders/covr_loaders/samples/) from the compact,
hand-written scene descriptions below. The content was written for this project; this script
only lays it out in each dataset's official file format. Run: python tools/make_loader_samples.py
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "loaders" / "covr_loaders" / "samples"

# GQA: image id -> (width, height, extras, objects); object: id -> (name, box, attrs, relations)
# relations: list of (predicate, target object id)
GQA = {
    "2370799": (
        500,
        375,
        {"location": "outdoors", "weather": "cloudy"},
        {
            "1058498": (
                "man",
                (120, 80, 90, 260),
                ["young", "tall"],
                [
                    ("wearing", "1058500"),
                    ("wearing", "1058501"),
                    ("holding", "1058502"),
                    ("to the left of", "1058503"),
                    ("standing on", "1058505"),
                ],
            ),
            "1058500": ("jeans", (135, 210, 60, 120), ["blue"], [("to the left of", "1058503")]),
            "1058501": ("shirt", (128, 120, 75, 95), ["white", "short sleeved"], []),
            "1058502": ("umbrella", (90, 30, 140, 90), ["black", "open"], [("above", "1058498")]),
            "1058503": (
                "car",
                (260, 190, 200, 110),
                ["red", "parked"],
                [
                    ("to the right of", "1058498"),
                    ("parked on", "1058504"),
                    ("in front of", "1058506"),
                ],
            ),
            "1058504": ("street", (0, 250, 500, 125), ["wet", "gray"], []),
            "1058505": ("sidewalk", (0, 300, 260, 75), ["concrete"], []),
            "1058506": (
                "tree",
                (300, 20, 150, 200),
                ["green", "leafy"],
                [("in front of", "1058507")],
            ),
            "1058507": ("building", (200, 0, 300, 220), ["brick", "tall"], []),
            "1058508": ("sky", (0, 0, 500, 60), ["cloudy", "gray"], []),
            "1058509": ("window", (220, 40, 40, 50), ["glass"], [("on", "1058507")]),
            "1058510": ("wheel", (280, 270, 40, 40), ["black", "round"], [("of", "1058503")]),
        },
    ),
    "2354786": (
        640,
        480,
        {"location": "indoors"},
        {
            "3411721": ("table", (40, 250, 560, 230), ["wooden", "brown"], []),
            "3411722": (
                "plate",
                (200, 300, 150, 60),
                ["white", "round"],
                [("on", "3411721"), ("to the left of", "3411724")],
            ),
            "3411723": ("pizza", (215, 295, 120, 45), ["cheesy", "sliced"], [("on", "3411722")]),
            "3411724": (
                "glass",
                (380, 240, 50, 90),
                ["clear", "full"],
                [("on", "3411721"), ("to the right of", "3411722")],
            ),
            "3411725": (
                "knife",
                (170, 330, 20, 70),
                ["silver", "metal"],
                [("on", "3411721"), ("next to", "3411722")],
            ),
            "3411726": (
                "woman",
                (260, 40, 200, 260),
                ["smiling", "young"],
                [
                    ("sitting at", "3411721"),
                    ("holding", "3411727"),
                    ("wearing", "3411728"),
                    ("eating", "3411723"),
                ],
            ),
            "3411727": ("fork", (300, 200, 15, 60), ["silver"], []),
            "3411728": ("sweater", (270, 120, 180, 150), ["red", "knitted"], []),
            "3411729": ("chair", (470, 200, 120, 250), ["wooden"], [("near", "3411721")]),
            "3411730": ("napkin", (120, 310, 60, 40), ["white", "folded"], [("on", "3411721")]),
            "3411731": ("glasses", (330, 80, 60, 20), ["black"], []),
        },
    ),
    "2368312": (
        500,
        333,
        {},
        {
            "907011": (
                "dog",
                (150, 120, 180, 140),
                ["brown", "small", "furry"],
                [("lying on", "907012"), ("chewing", "907013"), ("wearing", "907014")],
            ),
            "907012": ("grass", (0, 180, 500, 153), ["green", "short"], []),
            "907013": ("frisbee", (260, 200, 60, 25), ["red", "plastic"], [("on", "907012")]),
            "907014": ("collar", (190, 170, 40, 15), ["blue"], []),
            "907015": ("fence", (0, 60, 500, 90), ["white", "wooden"], [("behind", "907011")]),
            "907016": (
                "ball",
                (400, 230, 30, 30),
                ["yellow", "round"],
                [("on", "907012"), ("to the right of", "907011")],
            ),
        },
    ),
    "2395207": (
        800,
        600,
        {"location": "outdoors", "weather": "sunny"},
        {
            "581001": (
                "boy",
                (300, 200, 110, 300),
                ["young", "wet"],
                [("carrying", "581002"), ("walking on", "581003"), ("wearing", "581005")],
            ),
            "581002": ("surfboard", (250, 260, 250, 60), ["white", "long"], []),
            "581003": ("sand", (0, 420, 800, 180), ["brown", "wet"], []),
            "581004": ("ocean", (0, 250, 800, 180), ["blue", "calm"], [("behind", "581001")]),
            "581005": ("wetsuit", (310, 240, 90, 200), ["black"], []),
            "581006": (
                "people",
                (600, 300, 120, 120),
                ["standing"],
                [("on", "581003"), ("to the right of", "581001")],
            ),
            "581007": ("sky", (0, 0, 800, 250), ["blue", "clear"], []),
            "581008": ("wave", (100, 330, 300, 60), ["white", "small"], [("in", "581004")]),
        },
    ),
    "2405722": (
        640,
        427,
        {"location": "outdoors"},
        {
            "1250301": (
                "giraffe",
                (100, 30, 180, 380),
                ["tall", "spotted"],
                [("eating", "1250302"), ("standing on", "1250304"), ("to the left of", "1250303")],
            ),
            "1250302": ("leaves", (60, 10, 120, 90), ["green"], [("on", "1250305")]),
            "1250303": (
                "zebra",
                (350, 200, 200, 180),
                ["striped", "black and white"],
                [("standing on", "1250304"), ("to the right of", "1250301"), ("near", "1250306")],
            ),
            "1250304": ("grass", (0, 330, 640, 97), ["dry", "brown"], []),
            "1250305": ("tree", (0, 0, 250, 250), ["tall", "green"], []),
            "1250306": ("fence", (400, 250, 240, 100), ["metal"], []),
        },
    ),
    "2321581": (
        500,
        400,
        {"location": "indoors"},
        {
            "4401": ("bed", (50, 150, 400, 200), ["white", "made"], []),
            "4402": ("pillow", (80, 160, 120, 50), ["white", "soft"], [("on", "4401")]),
            "4403": (
                "cat",
                (220, 190, 120, 70),
                ["black", "sleeping"],
                [("lying on", "4401"), ("next to", "4402")],
            ),
            "4404": ("lamp", (420, 60, 60, 110), ["lit"], [("on", "4405")]),
            "4405": ("nightstand", (400, 170, 90, 120), ["wooden"], [("next to", "4401")]),
            "4406": ("glasses", (430, 165, 40, 12), ["black"], [("on", "4405")]),
            "4407": ("blanket", (60, 210, 380, 130), ["blue", "striped"], [("on", "4401")]),
        },
    ),
    "2382412": (
        640,
        480,
        {"location": "outdoors", "weather": "clear"},
        {
            "77001": (
                "man",
                (250, 60, 150, 330),
                ["young", "skinny"],
                [
                    ("riding", "77002"),
                    ("wearing", "77003"),
                    ("wearing", "77004"),
                    ("above", "77005"),
                ],
            ),
            "77002": ("skateboard", (240, 380, 140, 30), ["wooden"], [("on", "77005")]),
            "77003": ("helmet", (290, 55, 70, 50), ["black", "plastic"], []),
            "77004": ("shorts", (270, 230, 110, 80), ["khaki"], []),
            "77005": ("ramp", (0, 350, 640, 130), ["concrete", "gray"], []),
            "77006": ("shoe", (260, 370, 40, 20), ["white"], [("on", "77002")]),
        },
    ),
    "2386621": (
        500,
        333,
        {},
        {
            "66101": (
                "batter",
                (200, 60, 110, 230),
                ["ready"],
                [("holding", "66102"), ("wearing", "66103"), ("standing on", "66107")],
            ),
            "66102": ("bat", (280, 30, 20, 110), ["wooden", "brown"], []),
            "66103": ("helmet", (220, 60, 50, 40), ["blue", "shiny"], []),
            "66104": (
                "catcher",
                (120, 160, 100, 140),
                ["crouching"],
                [("behind", "66101"), ("wearing", "66105")],
            ),
            "66105": ("glove", (170, 200, 40, 40), ["leather", "brown"], []),
            "66106": (
                "umpire",
                (40, 100, 100, 200),
                ["standing"],
                [("behind", "66104"), ("wearing", "66108")],
            ),
            "66107": ("dirt", (0, 250, 500, 83), ["brown"], []),
            "66108": ("mask", (70, 105, 40, 45), ["black", "metal"], []),
        },
    ),
}

# VG scene_graphs.json: image id, objects (id, names, synsets, box, attributes), relationships
VG = [
    (
        1,
        [
            (1058549, ["tree", "trees"], ["tree.n.01"], (178, 0, 476, 360), ["green"]),
            (1058534, ["sidewalk", "side walk"], ["sidewalk.n.01"], (78, 308, 722, 290), None),
            (1058508, ["building"], ["building.n.01"], (1, 0, 222, 538), ["tall", "Brick"]),
            (1058539, ["street"], ["street.n.01"], (439, 283, 359, 258), ["gray"]),
            (1058543, ["shade"], ["shade.n.01"], (119, 322, 317, 147), None),
            (1058498, ["man", "person", "guy"], ["man.n.01"], (238, 298, 62, 176), ["walking "]),
            (3798575, ["car"], ["car.n.01"], (574, 283, 142, 67), ["white", "parked"]),
            (3798576, ["shirt"], ["shirt.n.01"], (241, 330, 56, 60), ["Red"]),
        ],
        [
            (4265927, "ON", 1058543, 1058534, ["along.r.01"]),
            (4265928, "wears", 1058498, 3798576, ["wear.v.01"]),
            (4265929, "  parked on ", 3798575, 1058539, ["park.v.02"]),
            (4265930, "next to", 1058549, 1058534, []),
            (4265931, "has", 1058508, 1058549, []),
        ],
    ),
    (
        10,
        [
            (1060210, ["horse"], ["horse.n.01"], (120, 100, 300, 250), ["brown"]),
            (
                1060211,
                ["rider", "woman", "person"],
                ["rider.n.01"],
                (200, 20, 120, 200),
                ["smiling"],
            ),
            (1060212, ["saddle"], ["saddle.n.01"], (230, 130, 90, 50), ["leather", "black"]),
            (1060213, ["field", "grass"], ["field.n.01"], (0, 300, 640, 180), ["green"]),
            (1060214, ["hat"], ["hat.n.01"], (230, 15, 60, 30), ["cowboy"]),
        ],
        [
            (4270001, "riding", 1060211, 1060210, ["ride.v.01"]),
            (4270002, "ON", 1060212, 1060210, []),
            (4270003, "wearing", 1060211, 1060214, ["wear.v.01"]),
            (4270004, "standing in", 1060210, 1060213, []),
        ],
    ),
    (
        2370799,
        [
            (5101, ["man", "pedestrian"], ["man.n.01"], (120, 80, 90, 260), ["young"]),
            (5102, ["umbrella"], ["umbrella.n.01"], (90, 30, 140, 90), ["black"]),
            (5103, ["car", "vehicle"], ["car.n.01"], (260, 190, 200, 110), ["red"]),
        ],
        [
            (4280001, "Holding", 5101, 5102, ["have.v.01"]),
            (4280002, "near", 5103, 5101, []),
        ],
    ),
    (
        107899,
        [
            (1400001, ["kite"], ["kite.n.03"], (300, 40, 80, 60), ["colorful", "flying"]),
            (1400002, ["girl", "child"], ["girl.n.01"], (150, 200, 70, 200), ["little"]),
            (1400003, ["string"], ["string.n.01"], (200, 90, 120, 150), ["thin", "white"]),
            (1400004, ["beach"], ["beach.n.01"], (0, 330, 640, 150), ["sandy"]),
            (1400005, ["sky"], ["sky.n.01"], (0, 0, 640, 200), ["blue"]),
        ],
        [
            (4290001, "flying", 1400002, 1400001, ["fly.v.01"]),
            (4290002, "attached to", 1400003, 1400001, []),
            (4290003, "standing on", 1400002, 1400004, []),
            (4290004, "in", 1400001, 1400005, []),
        ],
    ),
]

# imSitu: verbs with their abstract sentence and role order, nouns with glosses
VERBS = {
    "stapling": (
        "AGENT staples ITEM onto SURFACE using TOOL at PLACE",
        ["agent", "item", "surface", "tool", "place"],
        "Attaching",
        "attach with a staple",
    ),
    "riding": (
        "AGENT rides VEHICLE at PLACE",
        ["agent", "vehicle", "place"],
        "Ride_vehicle",
        "sit on and control the movement of an animal or a vehicle",
    ),
    "eating": (
        "AGENT eats FOOD from CONTAINER using TOOL at PLACE",
        ["agent", "food", "container", "tool", "place"],
        "Ingestion",
        "take in solid food",
    ),
    "surfing": (
        "AGENT surfs on TOOL at PLACE",
        ["agent", "tool", "place"],
        "Self_motion",
        "ride the waves of the sea with a surfboard",
    ),
    "reading": (
        "AGENT reads ITEM at PLACE",
        ["agent", "item", "place"],
        "Reading_activity",
        "look at, interpret, and say out loud something that is written",
    ),
    "hugging": (
        "AGENT hugs HUGGED at PLACE",
        ["agent", "hugged", "place"],
        "Manipulation",
        "squeeze tightly in your arms",
    ),
    "kicking": (
        "AGENT kicks VICTIM with VICTIMPART at PLACE",
        ["agent", "victim", "victimpart", "place"],
        "Impact",
        "strike with the foot",
    ),
    "cooking": (
        "AGENT cooks FOOD in CONTAINER on HEATSOURCE using TOOL at PLACE",
        ["agent", "food", "container", "heatsource", "tool", "place"],
        "Cooking_creation",
        "prepare a hot meal",
    ),
    "drinking": (
        "AGENT drinks LIQUID from CONTAINER at PLACE",
        ["agent", "liquid", "container", "place"],
        "Ingestion",
        "take in liquids",
    ),
}
TEMPLATES = {
    "stapling": "AGENT staples ITEM onto SURFACE using TOOL at PLACE",
    "riding": "AGENT rides VEHICLE at PLACE",
    "eating": "AGENT eats FOOD from CONTAINER using TOOL at PLACE",
    "surfing": "AGENT surfs on TOOL at PLACE",
    "reading": "AGENT reads ITEM at PLACE",
    "hugging": "AGENT hugs HUGGED at PLACE",
    "kicking": "AGENT kicks VICTIM with VICTIMPART at PLACE",
    "cooking": "AGENT cooks FOOD in CONTAINER on HEATSOURCE using TOOL at PLACE",
    # drinking is left to the space file's abstract sentence on purpose (fallback path)
}
NOUNS = {
    "n10287213": (["man", "adult male"], "an adult person who is male"),
    "n10787470": (["woman", "adult female"], "an adult female person"),
    "n09918248": (["child", "kid", "youngster"], "a young person of either sex"),
    "n00007846": (["person", "individual", "someone"], "a human being"),
    "n14974264": (["paper"], "a material made of cellulose pulp"),
    "n04546855": (["wall"], "an architectural partition"),
    "n04303497": (["stapler", "stapling machine"], "a machine that inserts staples"),
    "n03841666": (["office", "business office"], "place of business"),
    "n02374451": (["horse", "Equus caballus"], "solid-hoofed herbivorous quadruped"),
    "n08569998": (["field"], "a piece of land cleared of trees"),
    "n02834778": (["bicycle", "bike", "wheel", "cycle"], "a wheeled vehicle"),
    "n04334599": (["street"], "a thoroughfare in a city"),
    "n07873807": (["pizza", "pizza pie"], "Italian open pie"),
    "n03959701": (["plate"], "dish on which food is served"),
    "n03383948": (["fork"], "cutlery used for serving and eating food"),
    "n04081281": (["restaurant", "eating house"], "a building where meals are served"),
    "n04363210": (["surfboard", "surfriding board"], "a narrow buoyant board"),
    "n09217230": (["beach"], "an area of sand sloping down to the water"),
    "n06410904": (["book"], "a written work"),
    "n03001627": (["chair"], "a seat for one person"),
    "n08615149": (["park", "parkland"], "a large area of land preserved in its natural state"),
    "n02084071": (["dog", "domestic dog"], "a member of the genus Canis"),
    "n02778669": (["ball"], "round object that is hit or thrown or kicked in games"),
    "n05563266": (["foot", "human foot"], "the extremity of the leg"),
    "n07583197": (["soup"], "liquid food"),
    "n03990474": (["pot"], "metal or earthenware cooking vessel"),
    "n03459591": (["stove", "kitchen stove", "range"], "a kitchen appliance"),
    "n04284002": (["spoon"], "a piece of cutlery with a shallow bowl"),
    "n03619890": (["kitchen"], "a room equipped for preparing meals"),
    "n07929519": (["coffee", "java"], "a beverage made from roasted coffee beans"),
    "n03147509": (["cup"], "a small open container usually used for drinking"),
    "n07612632": (["cereal"], "a breakfast food"),
    "n02880940": (["bowl"], "a round vessel"),
}
# imSitu records: image name -> (verb, 3 frames); "" = empty role
IMSITU = {
    "stapling_1.jpg": (
        "stapling",
        [
            {
                "agent": "n10287213",
                "item": "n14974264",
                "surface": "n04546855",
                "tool": "n04303497",
                "place": "n03841666",
            },
            {
                "agent": "n10287213",
                "item": "n14974264",
                "surface": "n04546855",
                "tool": "n04303497",
                "place": "n03841666",
            },
            {
                "agent": "n00007846",
                "item": "n14974264",
                "surface": "",
                "tool": "n04303497",
                "place": "n03841666",
            },
        ],
    ),
    "stapling_2.jpg": (
        "stapling",
        [
            {
                "agent": "",
                "item": "n14974264",
                "surface": "n04546855",
                "tool": "n04303497",
                "place": "",
            },
            {
                "agent": "n10787470",
                "item": "n14974264",
                "surface": "",
                "tool": "n04303497",
                "place": "",
            },
            {
                "agent": "n10787470",
                "item": "n14974264",
                "surface": "",
                "tool": "n04303497",
                "place": "n03841666",
            },
        ],
    ),
    "riding_101.jpg": (
        "riding",
        [
            {"agent": "n10787470", "vehicle": "n02374451", "place": "n08569998"},
            {"agent": "n00007846", "vehicle": "n02374451", "place": "n08569998"},
            {"agent": "n10787470", "vehicle": "n02374451", "place": ""},
        ],
    ),
    "riding_205.jpg": (
        "riding",
        [
            {"agent": "n09918248", "vehicle": "n02834778", "place": ""},
            {"agent": "n09918248", "vehicle": "n02834778", "place": ""},
            {"agent": "n00007846", "vehicle": "n02834778", "place": "n04334599"},
        ],
    ),
    "eating_33.jpg": (
        "eating",
        [
            {
                "agent": "n10787470",
                "food": "n07873807",
                "container": "n03959701",
                "tool": "n03383948",
                "place": "n04081281",
            },
            {
                "agent": "n10787470",
                "food": "n07873807",
                "container": "n03959701",
                "tool": "",
                "place": "n04081281",
            },
            {
                "agent": "n00007846",
                "food": "n07873807",
                "container": "n03959701",
                "tool": "n03383948",
                "place": "",
            },
        ],
    ),
    "eating_7.jpg": (
        "eating",
        [
            {
                "agent": "n09918248",
                "food": "n07612632",
                "container": "n02880940",
                "tool": "n04284002",
                "place": "n03619890",
            },
            {
                "agent": "n09918248",
                "food": "n07612632",
                "container": "n02880940",
                "tool": "n04284002",
                "place": "",
            },
            {
                "agent": "n09918248",
                "food": "n07612632",
                "container": "",
                "tool": "n04284002",
                "place": "n03619890",
            },
        ],
    ),
    "surfing_12.jpg": (
        "surfing",
        [
            {"agent": "n10287213", "tool": "n04363210", "place": "n09217230"},
            {"agent": "n10287213", "tool": "n04363210", "place": "n09217230"},
            {"agent": "n00007846", "tool": "n04363210", "place": ""},
        ],
    ),
    "reading_55.jpg": (
        "reading",
        [
            {"agent": "n10787470", "item": "n06410904", "place": ""},
            {"agent": "n10787470", "item": "n06410904", "place": ""},
            {"agent": "n10787470", "item": "n06410904", "place": ""},
        ],
    ),
    "hugging_3.jpg": (
        "hugging",
        [
            {"agent": "n09918248", "hugged": "n02084071", "place": "n08615149"},
            {"agent": "n09918248", "hugged": "n02084071", "place": "n08615149"},
            {"agent": "n09918248", "hugged": "n02084071", "place": ""},
        ],
    ),
    "kicking_48.jpg": (
        "kicking",
        [
            {"agent": "n09918248", "victim": "n02778669", "victimpart": "", "place": "n08615149"},
            {"agent": "n10287213", "victim": "n02778669", "victimpart": "", "place": "n08569998"},
            {"agent": "n09918248", "victim": "n02778669", "victimpart": "", "place": "n08615149"},
        ],
    ),
    "cooking_90.jpg": (
        "cooking",
        [
            {
                "agent": "n10287213",
                "food": "n07583197",
                "container": "n03990474",
                "heatsource": "n03459591",
                "tool": "n04284002",
                "place": "n03619890",
            },
            {
                "agent": "n10287213",
                "food": "n07583197",
                "container": "n03990474",
                "heatsource": "n03459591",
                "tool": "",
                "place": "n03619890",
            },
            {
                "agent": "n10787470",
                "food": "n07583197",
                "container": "n03990474",
                "heatsource": "n03459591",
                "tool": "n04284002",
                "place": "n03619890",
            },
        ],
    ),
    "drinking_21.jpg": (
        "drinking",
        [
            {
                "agent": "n10287213",
                "liquid": "n07929519",
                "container": "n03147509",
                "place": "n04081281",
            },
            {"agent": "n10287213", "liquid": "n07929519", "container": "n03147509", "place": ""},
            {
                "agent": "n10287213",
                "liquid": "n07929519",
                "container": "n03147509",
                "place": "n04081281",
            },
        ],
    ),
}


def gqa() -> dict[str, object]:
    out: dict[str, object] = {}
    for image_id, (width, height, extras, objects) in GQA.items():
        record: dict[str, object] = {"width": width, "height": height, **extras}
        record["objects"] = {
            oid: {
                "name": name,
                "x": box[0],
                "y": box[1],
                "w": box[2],
                "h": box[3],
                "attributes": attrs,
                "relations": [{"name": pred, "object": target} for pred, target in rels],
            }
            for oid, (name, box, attrs, rels) in objects.items()
        }
        out[image_id] = record
    return out


def vg() -> list[object]:
    out: list[object] = []
    for image_id, objects, rels in VG:
        objs = []
        for oid, names, synsets, box, attrs in objects:
            obj: dict[str, object] = {
                "object_id": oid,
                "names": names,
                "synsets": synsets,
                "x": box[0],
                "y": box[1],
                "w": box[2],
                "h": box[3],
            }
            if attrs is not None:
                obj["attributes"] = attrs
            objs.append(obj)
        relationships = [
            {
                "relationship_id": rid,
                "predicate": pred,
                "subject_id": s,
                "object_id": o,
                "synsets": syn,
            }
            for rid, pred, s, o, syn in rels
        ]
        out.append({"image_id": image_id, "objects": objs, "relationships": relationships})
    return out


def space() -> dict[str, object]:
    verbs = {
        verb: {
            "abstract": abstract,
            "def": definition,
            "framenet": framenet,
            "order": order,
            "roles": {r: {"framenet": r, "def": f"the {r} of the {verb} event"} for r in order},
        }
        for verb, (abstract, order, framenet, definition) in VERBS.items()
    }
    nouns = {n: {"gloss": gloss, "def": d} for n, (gloss, d) in NOUNS.items()}
    return {"verbs": verbs, "nouns": nouns}


def main() -> None:
    (OUT / "gqa").mkdir(parents=True, exist_ok=True)
    (OUT / "vg").mkdir(parents=True, exist_ok=True)
    (OUT / "imsitu").mkdir(parents=True, exist_ok=True)
    (OUT / "gqa" / "val_sceneGraphs.json").write_text(json.dumps(gqa(), indent=1) + "\n")
    (OUT / "vg" / "scene_graphs.json").write_text(json.dumps(vg(), indent=1) + "\n")
    (OUT / "imsitu" / "imsitu_space.json").write_text(json.dumps(space(), indent=1) + "\n")
    records = {name: {"verb": verb, "frames": frames} for name, (verb, frames) in IMSITU.items()}
    (OUT / "imsitu" / "dev.json").write_text(json.dumps(records, indent=1) + "\n")
    lines = ["# verb<TAB>sentence: role order and connector words for imSitu verbs"]
    lines += [f"{verb}\t{sentence}" for verb, sentence in TEMPLATES.items()]
    (OUT / "imsitu" / "generation_templates.tab").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
