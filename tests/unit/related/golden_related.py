"""Golden texts of the related-image match builder: one per shape, plus edited and relaxed rules.

Regenerate only on purpose (a changed text changes query plans: re-check them with GRAPH.EXPLAIN).
"""

from __future__ import annotations

SHAPES = {
    "single": "man[tall]",
    "hop": "man-(wearing)->hat[red]",
    "chain": "man-(holding)->bat-(on)->table[wooden]",
    "v": "man{-(holding)->bat,-(wearing)->hat}",
    "frame_1": "man-(stapling|onto:wall)->paper",
    "frame_3": "man-(stapling|at:office|onto:wall|using:stapler)->paper",
}

EXACT = {
    "single": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name = $b0_o0
  AND $b0_a0 IN o0.attributes
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name] AS names, [o0.attributes] AS attributes, [] AS relation_names, [] AS relmod_names""",
    "hop": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name = $b0_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name = $b0_r0
  AND o1.name = $b0_o1
  AND $b0_a1 IN o1.attributes
  AND o1 <> o0
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name, o1.name] AS names, [o0.attributes, o1.attributes] AS attributes, [r0.name] AS relation_names, [] AS relmod_names""",
    "chain": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name = $b0_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name = $b0_r0
  AND o1.name = $b0_o1
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (o1)-[:SUBJ]->(r1:Relation)-[:OBJ]->(o2:Object)
WHERE r1.name = $b0_r1
  AND o2.name = $b0_o2
  AND $b0_a2 IN o2.attributes
  AND o2 <> o0
  AND o2 <> o1
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name, o1.name, o2.name] AS names, [o0.attributes, o1.attributes, o2.attributes] AS attributes, [r0.name, r1.name] AS relation_names, [] AS relmod_names""",
    "v": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name = $b0_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name = $b0_r0
  AND o1.name = $b0_o1
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (o0)-[:SUBJ]->(r1:Relation)-[:OBJ]->(o2:Object)
WHERE r1.name = $b0_r1
  AND o2.name = $b0_o2
  AND o2 <> o0
  AND o2 <> o1
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name, o1.name, o2.name] AS names, [o0.attributes, o1.attributes, o2.attributes] AS attributes, [r0.name, r1.name] AS relation_names, [] AS relmod_names""",
    "frame_1": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name = $b0_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name = $b0_r0
  AND o1.name = $b0_o1
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (r0)-[:MOD]->(m0:RelMod)-[:OBJ]->(o2:Object)
WHERE m0.name = $b0_m0
  AND o2.name = $b0_o2
  AND o2 <> o0
  AND o2 <> o1
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name, o1.name, o2.name] AS names, [o0.attributes, o1.attributes, o2.attributes] AS attributes, [r0.name] AS relation_names, [m0.name] AS relmod_names""",
    "frame_3": """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name = $b0_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name = $b0_r0
  AND o1.name = $b0_o1
  AND o1 <> o0
WITH i, o0, r0, o1
MATCH (r0)-[:MOD]->(m0:RelMod)-[:OBJ]->(o2:Object)
WHERE m0.name = $b0_m0
  AND o2.name = $b0_o2
  AND o2 <> o0
  AND o2 <> o1
WITH i, o0, r0, o1, m0, o2
MATCH (r0)-[:MOD]->(m1:RelMod)-[:OBJ]->(o3:Object)
WHERE m1.name = $b0_m1
  AND o3.name = $b0_o3
  AND o3 <> o0
  AND o3 <> o1
  AND o3 <> o2
WITH i, o0, r0, o1, m0, o2, m1, o3
MATCH (r0)-[:MOD]->(m2:RelMod)-[:OBJ]->(o4:Object)
WHERE m2.name = $b0_m2
  AND o4.name = $b0_o4
  AND o4 <> o0
  AND o4 <> o1
  AND o4 <> o2
  AND o4 <> o3
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name, o1.name, o2.name, o3.name, o4.name] AS names, [o0.attributes, o1.attributes, o2.attributes, o3.attributes, o4.attributes] AS attributes, [r0.name] AS relation_names, [m0.name, m1.name, m2.name] AS relmod_names""",
}

UNION = """\
UNWIND $b0_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name <> $b0_o0_x
  AND NOT o0.name IN $b0_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name = $b0_r0
  AND o1.name = $b0_o1
  AND any(a IN o1.attributes WHERE a IN $b0_a1)
  AND o1 <> o0
RETURN i.id AS image_id, $b0_tag AS tag, [o0.name, o1.name] AS names, [o0.attributes, o1.attributes] AS attributes, [r0.name] AS relation_names, [] AS relmod_names
UNION ALL
UNWIND $b1_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE o0.name IN $b1_o0
WITH i, o0
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE r0.name <> $b1_r0
  AND any(a IN o1.attributes WHERE NOT a IN $b1_a1)
  AND o1 <> o0
RETURN i.id AS image_id, $b1_tag AS tag, [o0.name, o1.name] AS names, [o0.attributes, o1.attributes] AS attributes, [r0.name] AS relation_names, [] AS relmod_names"""

ANCHORED_KEY = "man-(stapling|onto:wall)->paper[white]"

ANCHORED = """\
MATCH (m0:RelMod)
WHERE m0.name = $d0_m0
WITH m0
MATCH (r0:Relation)-[:MOD]->(m0)
WHERE r0.name = $d0_r0
WITH m0, r0
MATCH (m0)-[:OBJ]->(o2:Object)
WHERE o2.name = $d0_o2
WITH m0, r0, o2
MATCH (o0:Object)-[:SUBJ]->(r0)
WHERE o0.name <> $d0_o0_x
  AND NOT o0.name IN $d0_o0
  AND o0 <> o2
WITH m0, r0, o2, o0
MATCH (r0)-[:OBJ]->(o1:Object)
WHERE o1.name = $d0_o1
  AND $d0_a1 IN o1.attributes
  AND o1 <> o2
  AND o1 <> o0
WITH m0, r0, o2, o0, o1
MATCH (i:Image)-[:HAS]->(o0)
WHERE i.split = $d0_split
RETURN DISTINCT i.id AS image_id, $d0_tag AS tag"""

ANCHORED_COUNTING = """\
MATCH (m0:RelMod)
WHERE m0.name = $d0_m0
WITH m0
MATCH (r0:Relation)-[:MOD]->(m0)
WHERE r0.name = $d0_r0
WITH m0, r0
MATCH (m0)-[:OBJ]->(o2:Object)
WHERE o2.name = $d0_o2
WITH m0, r0, o2
MATCH (o0:Object)-[:SUBJ]->(r0)
WHERE NOT o0.name IN $d0_o0
  AND o0 <> o2
WITH m0, r0, o2, o0, CASE WHEN o0.name = $d0_eq_o0 THEN 0 ELSE 1 END AS c0
WHERE c0 <= $d0_max
MATCH (r0)-[:OBJ]->(o1:Object)
WHERE o1.name = $d0_o1
  AND any(a IN o1.attributes WHERE a = $d0_a1_x OR a IN $d0_a1)
  AND o1 <> o2
  AND o1 <> o0
WITH m0, r0, o2, o0, o1, c0, c0 + CASE WHEN $d0_eq_a1 IN o1.attributes THEN 0 ELSE 1 END AS c1
WHERE c1 <= $d0_max
MATCH (i:Image)-[:HAS]->(o0)
WHERE i.split = $d0_split
RETURN DISTINCT i.id AS image_id, $d0_tag AS tag, [o0.name, o1.name, o2.name] AS names, [o0.attributes, o1.attributes, o2.attributes] AS attributes, [r0.name] AS relation_names, [m0.name] AS relmod_names"""

COMBINED_KEY = "man[tall]-(wearing)->hat[red]"

COMBINED = """\
UNWIND $c_ids AS image_id
MATCH (i:Image {id: image_id})
WITH i
MATCH (i)-[:HAS]->(o0:Object)
WHERE NOT o0.name IN $c_o0
  AND $c_a0 IN o0.attributes
WITH i, o0, CASE WHEN o0.name = $c_eq_o0 THEN 0 ELSE 1 END + CASE WHEN $c_eq_a0 IN o0.attributes THEN 0 ELSE 1 END AS c0
WHERE c0 <= $c_max
MATCH (o0)-[:SUBJ]->(r0:Relation)-[:OBJ]->(o1:Object)
WHERE o1.name = $c_o1
  AND any(a IN o1.attributes WHERE a = $c_a1_x OR a IN $c_a1)
  AND o1 <> o0
WITH i, o0, r0, o1, c0, c0 + CASE WHEN r0.name = $c_eq_r0 THEN 0 ELSE 1 END + CASE WHEN o1.name = $c_eq_o1 THEN 0 ELSE 1 END + CASE WHEN $c_eq_a1 IN o1.attributes THEN 0 ELSE 1 END AS c1
WHERE c1 <= $c_max
RETURN i.id AS image_id, $c_tag AS tag, [o0.name, o1.name] AS names, [o0.attributes, o1.attributes] AS attributes, [r0.name] AS relation_names, [] AS relmod_names"""
